import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import type { WorkerRole } from '../../src/config';
import { shiphookProcessEnv } from '../../src/launcher/process-env';
import { stopChild } from '../../src/launcher/temporal';
import { logFile } from './log-capture';
import { startSystem, testConfig } from './system';
import { TEST_ENV } from './test-config';

const CLI = path.resolve('bin/shiphook.mjs');

/**
 * For tests that must own every process touching their data (a worker killed at
 * will, a dispatcher that must not be beaten to an event by the suite's worker):
 * a database of their own on the suite's PostgreSQL server, migrated.
 */
async function isolatedDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const shared = new URL(inject('databaseUrl'));
  const name = `shiphook_iso_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const admin = new pg.Client({ connectionString: shared.toString() });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(shared);
  url.pathname = `/${name}`;
  // Through the CLI, as operators migrate (and as the suite's global setup does).
  execFileSync(process.execPath, [CLI, 'migrate'], { env: { ...process.env, DATABASE_URL: url.toString() }, stdio: ['ignore', 'ignore', 'inherit'] });
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

let workersStarted = 0;

/** A worker process and the port of its HTTP listener (/healthz, /readyz, /metrics). */
export type WorkerProcess = ChildProcess & { httpPort: number; logFile: string };

/** A `shiphook worker` process with the test timings; resolves once it polls. Its log lines go to the suite's log folder. */
async function startWorkerProcess(env: Record<string, string> & { DATABASE_URL: string; TEMPORAL_ADDRESS: string; SHIPHOOK_TASK_QUEUE: string }): Promise<WorkerProcess> {
  const file = logFile(inject('logDir'), `worker-${process.pid}-${++workersStarted}`);
  const out = openSync(file, 'a');
  const child = spawn(process.execPath, [CLI, 'worker'], {
    env: { ...shiphookProcessEnv(), ...TEST_ENV, LOG_LEVEL: 'debug', ...env },
    stdio: ['ignore', out, out, 'ipc'],
  });
  const httpPort = await new Promise<number>((resolve, reject) => {
    child.on('message', (m: { ready?: boolean; httpPort?: number }) => m?.ready && resolve(m.httpPort!));
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready; see ${file}`)));
  });
  return Object.assign(child, { httpPort, logFile: file });
}

export type IsolatedSystem = Awaited<ReturnType<typeof isolatedSystem>>;

/** An API, a database and a task queue of its own: only workers this test starts touch its events. */
export async function isolatedSystem(overrides: { temporalAddress?: string } = {}) {
  const database = await isolatedDatabase();
  const taskQueue = `isolated-${process.pid}-${Date.now()}`;
  const api = await startSystem({ databaseUrl: database.url, taskQueue, ...overrides }).catch(async (err) => {
    await database.drop();
    throw err;
  });
  const workers: WorkerProcess[] = [];
  return {
    api,
    async worker(opts: { temporalAddress?: string; role?: WorkerRole; env?: Record<string, string> } = {}) {
      const w = await startWorkerProcess({
        DATABASE_URL: database.url,
        TEMPORAL_ADDRESS: opts.temporalAddress ?? testConfig().temporalAddress!,
        SHIPHOOK_TASK_QUEUE: taskQueue,
        SHIPHOOK_WORKER_ROLE: opts.role ?? 'all',
        ...opts.env,
      });
      workers.push(w);
      return w;
    },
    dispatchedAt: async (eventId: string) =>
      (await api.db.selectFrom('events').select('dispatched_at').where('id', '=', eventId).executeTakeFirstOrThrow()).dispatched_at,
    async close() {
      await Promise.all(workers.map((w) => stopChild(w)));
      await api.close();
      await database.drop();
    },
  };
}
