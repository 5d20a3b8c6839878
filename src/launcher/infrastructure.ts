import path from 'node:path';
import { type EmbeddedDatabase, startEmbeddedPostgres } from './postgres';
import { type DevTemporal, startDevTemporal } from './temporal';

export interface Infrastructure {
  databaseUrl: string;
  temporalAddress: string;
  temporalUiUrl?: string;
  /** Which services this launcher started (and will stop). */
  started: { postgres: boolean; temporal: boolean };
  /** The embedded PostgreSQL's data directory, when one was started. */
  postgresDataDir?: string;
  /** Resolves with the reason if a service started here exits without `stop()`; otherwise never. */
  died: Promise<string>;
  stop(): Promise<void>;
}

export interface InfrastructureOptions {
  dataDir: string;
  databaseUrl?: string;
  temporalAddress?: string;
  temporalCliPath?: string;
  /** Keep data across restarts (dev) or throw it away (tests). */
  persistent: boolean;
  /** The dev server's SQLite file even when not persistent (the bench measures its growth); in memory otherwise. */
  temporalDbFile?: string;
  postgresPort?: number;
  temporalPort?: number;
  temporalUiPort?: number;
  /** The dev server's Prometheus metrics port (the bench counts its persistence requests). */
  temporalMetricsPort?: number;
  ui: boolean;
  /** The dev server's namespace retention (`shiphook dev`: SHIPHOOK_EVENT_RETENTION); its default otherwise. */
  temporalNamespaceRetentionMs?: number;
  /** Embedded PostgreSQL only: load pg_stat_statements. */
  statementStats?: boolean;
}

/**
 * The services shiphook stands on: the ones named by the environment, or embedded
 * ones started here (PostgreSQL from npm, the Temporal dev server from the `temporal`
 * CLI). If one fails to start, the other is stopped before the error is thrown.
 */
export async function startInfrastructure(opts: InfrastructureOptions): Promise<Infrastructure> {
  const [postgres, temporal] = await Promise.allSettled([
    opts.databaseUrl ? undefined : startEmbeddedPostgres(opts.dataDir, { port: opts.postgresPort, persistent: opts.persistent, statementStats: opts.statementStats }),
    opts.temporalAddress
      ? undefined
      : startDevTemporal({
          cliPath: opts.temporalCliPath,
          dbFile: opts.temporalDbFile ?? (opts.persistent ? path.join(opts.dataDir, 'temporal.db') : undefined),
          durable: opts.persistent,
          port: opts.temporalPort,
          uiPort: opts.temporalUiPort,
          ui: opts.ui,
          metricsPort: opts.temporalMetricsPort,
          namespaceRetentionMs: opts.temporalNamespaceRetentionMs,
        }),
  ]);
  const pg: EmbeddedDatabase | undefined = postgres.status === 'fulfilled' ? postgres.value : undefined;
  const dev: DevTemporal | undefined = temporal.status === 'fulfilled' ? temporal.value : undefined;
  // Called after the processes that use them stopped: both at once.
  const stop = async () => {
    await Promise.all([dev?.stop(), pg?.stop()]);
  };
  const failed = [postgres, temporal].find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
  if (failed) {
    await stop();
    throw failed.reason;
  }
  return {
    databaseUrl: opts.databaseUrl ?? pg!.url,
    temporalAddress: opts.temporalAddress ?? dev!.address,
    temporalUiUrl: dev?.uiUrl,
    started: { postgres: !!pg, temporal: !!dev },
    postgresDataDir: pg?.dataDir,
    died: Promise.race([pg?.died, dev?.died].filter((d) => d !== undefined).concat(new Promise<never>(() => {}))),
    stop,
  };
}
