import type { Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { inject } from 'vitest';
import { createApp } from '../../src/api/app';
import { answerParserErrors } from '../../src/api/client-error';
import { createRateLimits } from '../../src/api/rate-limit';
import { watchResponses } from './contract';
import { startPrincipalCache } from '../../src/api/principal-cache';
import { type Config, loadConfig } from '../../src/config';
import { createDb, type Db } from '../../src/db/database';
import { logToFile, setLogLevel } from '../../src/log';
import { lazyTemporal, type TemporalClientSource } from '../../src/engine/client';
import { logFile } from './log-capture';
import { TEST_ENV } from './test-config';

/** The system under test as one test file sees it: a real API server on a free port. */
export interface TestSystem {
  config: Config;
  db: Db;
  baseUrl: string; // http://127.0.0.1:PORT/v2
  origin: string; // http://127.0.0.1:PORT
  /** The API's own Temporal client (connected on first use, closed by `close`). */
  temporal: TemporalClientSource;
  /** The API's HTTP server (to count or watch what reaches it). */
  server: Server;
  close(): Promise<void>;
}

export function testConfig(): Config {
  return loadConfig({
    ...TEST_ENV,
    DATABASE_URL: inject('databaseUrl'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
  });
}

let logsCaptured = false;

/** This test process's log lines (its api's), at debug level, into the suite's log folder. */
function captureLogs(): void {
  if (logsCaptured) return;
  logsCaptured = true;
  logToFile(logFile(inject('logDir'), `tests-${process.pid}`));
  setLogLevel('debug');
}

/** `rateLimitWindowSeconds`: longer windows, so a test's burst falls in one window even on a busy machine. */
export async function startSystem(overrides: Partial<Config> = {}, opts: { rateLimitWindowSeconds?: number } = {}): Promise<TestSystem> {
  captureLogs();
  const config = { ...testConfig(), ...overrides };
  const db = createDb(config.databaseUrl!, 5);
  const temporal = lazyTemporal(config);
  // As `shiphook api` runs: authentication served from the cache, kept right by the database trigger.
  const principals = startPrincipalCache(config.databaseUrl!);
  const rateLimits = createRateLimits(config, { windowSeconds: opts.rateLimitWindowSeconds });
  const app = createApp({ config, db, temporal, principals, rateLimits });
  const server: Server = app.listen(0, '127.0.0.1');
  answerParserErrors(server);
  // Tests that run a CLI with execFileSync block this process for seconds; with Node's 5 s
  // keep-alive the server may drop an idle socket just as fetch reuses it (ECONNRESET).
  server.keepAliveTimeout = 65_000;
  // Every response, whoever asked, is checked against the OpenAPI document; close() reports what broke it.
  const violations: string[] = [];
  watchResponses(server, violations);
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    config,
    db,
    origin,
    baseUrl: `${origin}/v2`,
    temporal,
    server,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await Promise.all([db.destroy(), temporal.close(), principals.close(), rateLimits.close()]);
      if (violations.length) throw new Error(`${violations.length} responses broke the OpenAPI document:\n${violations.slice(0, 10).join('\n')}`);
    },
  };
}
