import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { inject } from 'vitest';
import type { WorkerRole } from '../../src/config';
import { freePort } from '../../src/launcher/free-port';
import { shiphookProcessEnv } from '../../src/launcher/process-env';
import { stopChild } from '../../src/launcher/temporal';
import { startSystem, type TestSystem, testConfig } from './system';
import { TEST_ENV } from './test-config';

const CLI = path.resolve('bin/shiphook.mjs');
const exec = promisify(execFile);

/** Through the CLI, as operators migrate (and as the suite's global setup does); never blocking this process. */
async function migrate(databaseUrl: string): Promise<void> {
  await exec(process.execPath, [CLI, 'migrate'], { env: { ...process.env, DATABASE_URL: databaseUrl } });
}

/**
 * For tests that must own every process touching their data (a worker killed at
 * will, a dispatcher that must not be beaten to an event by the suite's worker):
 * a database of their own on the suite's PostgreSQL server, migrated — or, with
 * `databaseUrl`, that database (e.g. on a PostgreSQL server the test stops).
 */
async function isolatedDatabase(databaseUrl?: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (databaseUrl) {
    await migrate(databaseUrl);
    return { url: databaseUrl, drop: async () => undefined };
  }
  const shared = new URL(inject('databaseUrl'));
  const name = `shiphook_iso_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const admin = new pg.Client({ connectionString: shared.toString() });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(shared);
  url.pathname = `/${name}`;
  await migrate(url.toString());
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: shared.toString() });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/**
 * The workers' workflow bundle, built once per content of the sources it is made
 * from and shared by every test file's worker processes (a worker started without one would build
 * it itself, ~10 s of CPU per start).
 */
export async function workflowBundleFile(): Promise<string> {
  const hash = createHash('sha256');
  for (const dir of ['workflows', 'src/temporal', 'activities']) {
    for (const f of readdirSync(dir).sort()) if (f.endsWith('.ts')) hash.update(f).update(readFileSync(path.join(dir, f)));
  }
  const file = path.join(tmpdir(), `shiphook-test-bundle-${hash.digest('hex').slice(0, 16)}.js`);
  if (existsSync(file)) return file;
  const partial = `${file}.${process.pid}.tmp`;
  await exec(process.execPath, [CLI, 'bundle-workflows', partial]);
  renameSync(partial, file); // atomic: a concurrent file sees the whole bundle or none
  return file;
}

/** A `shiphook api` or `shiphook worker` child process and what it wrote to stdout (its JSON log lines). */
export interface ShiphookProcess {
  child: ChildProcess;
  logs: string[];
  /** Still running (never exited, never killed by a signal). */
  readonly alive: boolean;
}

const MAX_LOG_LINES = 5000;

/** Starts `shiphook <command>` with the test timings; resolves once it says it is ready (IPC). */
async function startShiphookProcess(command: 'api' | 'worker', env: Record<string, string>): Promise<ShiphookProcess> {
  const child = spawn(process.execPath, [CLI, command], {
    env: { ...shiphookProcessEnv(), ...TEST_ENV, ...env },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const logs: string[] = [];
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    logs.push(...lines);
    if (logs.length > MAX_LOG_LINES) logs.splice(0, logs.length - MAX_LOG_LINES);
  });
  await new Promise<void>((resolve, reject) => {
    child.on('message', (m: { ready?: boolean }) => m?.ready && resolve());
    child.once('exit', (code, signal) => reject(new Error(`shiphook ${command} exited (${code ?? signal}) before it was ready`)));
  });
  return {
    child,
    logs,
    get alive() {
      return child.exitCode === null && child.signalCode === null;
    },
  };
}

export type IsolatedSystem = Awaited<ReturnType<typeof isolatedSystem>>;

/**
 * An API, a database and a task queue of its own: only workers this test starts
 * touch its events. `api` is served in this process (for setup and reads); `apiProcess()`
 * starts a real `shiphook api` child on the same database.
 */
export async function isolatedSystem(overrides: { temporalAddress?: string; databaseUrl?: string; env?: Record<string, string> } = {}) {
  const database = await isolatedDatabase(overrides.databaseUrl);
  const taskQueue = `isolated-${process.pid}-${Date.now()}`;
  const temporalAddress = overrides.temporalAddress ?? testConfig().temporalAddress!;
  const api = await startSystem({ databaseUrl: database.url, taskQueue, temporalAddress }).catch(async (err) => {
    await database.drop();
    throw err;
  });
  const processes: ShiphookProcess[] = [];
  const baseEnv = () => ({ DATABASE_URL: database.url, TEMPORAL_ADDRESS: temporalAddress, SHIPHOOK_TASK_QUEUE: taskQueue, ...overrides.env });
  return {
    api,
    databaseUrl: database.url,
    taskQueue,
    /** A `shiphook worker` process on this system; resolves once it polls. */
    async workerProcess(opts: { temporalAddress?: string; role?: WorkerRole; env?: Record<string, string> } = {}) {
      const w = await startShiphookProcess('worker', {
        ...baseEnv(),
        // The suite's Temporal unless told: a worker on an API's unreachable one would never start anything.
        TEMPORAL_ADDRESS: opts.temporalAddress ?? testConfig().temporalAddress!,
        SHIPHOOK_WORKER_ROLE: opts.role ?? 'all',
        SHIPHOOK_WORKFLOW_BUNDLE: await workflowBundleFile(),
        ...opts.env,
      });
      processes.push(w);
      return w;
    },
    async worker(opts: { temporalAddress?: string; role?: WorkerRole; env?: Record<string, string> } = {}) {
      return (await this.workerProcess(opts)).child;
    },
    /** A `shiphook api` process on this system (on `port`, e.g. the one of an api it replaces), and a handle for `call()`. */
    async apiProcess(opts: { port?: number; env?: Record<string, string> } = {}): Promise<ShiphookProcess & { sys: TestSystem; port: number }> {
      const port = opts.port ?? (await freePort());
      const p = await startShiphookProcess('api', { ...baseEnv(), PORT: String(port), HOST: '127.0.0.1', SHIPHOOK_API_PROCESSES: '1', ...opts.env });
      processes.push(p);
      const origin = `http://127.0.0.1:${port}`;
      return Object.assign(p, { port, sys: { ...api, origin, baseUrl: `${origin}/v2` } });
    },
    dispatchedAt: async (eventId: string) =>
      (await api.db.selectFrom('events').select('dispatched_at').where('id', '=', eventId).executeTakeFirstOrThrow()).dispatched_at,
    async close() {
      await Promise.all(processes.map((p) => stopChild(p.child)));
      await api.close();
      await database.drop();
    },
  };
}
