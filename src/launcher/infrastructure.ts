import path from 'node:path';
import { startEmbeddedPostgres } from './postgres';
import { startDevTemporal } from './temporal';

export interface Infrastructure {
  databaseUrl: string;
  temporalAddress: string;
  temporalUiUrl?: string;
  /** Which services this launcher started (and will stop). */
  started: { postgres: boolean; temporal: boolean };
  stop(): Promise<void>;
}

export interface InfrastructureOptions {
  dataDir: string;
  databaseUrl?: string;
  temporalAddress?: string;
  temporalCliPath?: string;
  /** Keep data across restarts (dev) or throw it away (tests). */
  persistent: boolean;
  postgresPort?: number;
  temporalPort?: number;
  temporalUiPort?: number;
  ui: boolean;
  /** Embedded PostgreSQL only: load pg_stat_statements. */
  statementStats?: boolean;
}

/**
 * What `shiphook dev` and the test suite both stand on: the services named by the
 * environment, or embedded ones started here (PostgreSQL from npm, the Temporal
 * dev server from the `temporal` CLI).
 */
export async function startInfrastructure(opts: InfrastructureOptions): Promise<Infrastructure> {
  const [postgres, temporal] = await Promise.all([
    opts.databaseUrl ? undefined : startEmbeddedPostgres(opts.dataDir, { port: opts.postgresPort, persistent: opts.persistent, statementStats: opts.statementStats }),
    opts.temporalAddress
      ? undefined
      : startDevTemporal({
          cliPath: opts.temporalCliPath,
          dbFile: opts.persistent ? path.join(opts.dataDir, 'temporal.db') : undefined,
          port: opts.temporalPort,
          uiPort: opts.temporalUiPort,
          ui: opts.ui,
        }),
  ]);
  return {
    databaseUrl: opts.databaseUrl ?? postgres!.url,
    temporalAddress: opts.temporalAddress ?? temporal!.address,
    temporalUiUrl: temporal?.uiUrl,
    started: { postgres: !!postgres, temporal: !!temporal },
    async stop() {
      await Promise.allSettled([temporal?.stop(), postgres?.stop()]);
    },
  };
}
