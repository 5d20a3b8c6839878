import { type ChildProcess, execFile } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { inject } from 'vitest';
import type { Config, WorkerRole } from '../../src/config';
import { startShiphookChild } from '../../src/launcher/child';
import { shiphookProcessEnv } from '../../src/launcher/process-env';
import { dispatchedAt } from './events';
import { logFile } from './log-capture';
import { startSystem, type TestSystem, testConfig } from './system';
import { TEST_ENV } from './test-config';
import { workflowBundleFile } from './workflow-bundle';

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

/** A `shiphook api` or `shiphook worker` child process; its log lines go to the suite's log folder. */
export interface ShiphookProcess {
  child: ChildProcess;
  logFile: string;
  /** Its HTTP listener (api: the API; workers: /healthz, /readyz, /metrics). */
  httpPort?: number;
  /** What it logged so far (JSON lines). */
  readonly logs: string[];
  /** Still running (never exited, never killed by a signal). */
  readonly alive: boolean;
  stop(): Promise<void>;
}

/** A worker process and the port of its HTTP listener (/healthz, /readyz, /metrics). */
export type WorkerProcess = ChildProcess & { httpPort: number; logFile: string };

let started = 0;
/** How much of a process's log a failure to start quotes. */
const LAST_LINES = 20;

/**
 * Starts `shiphook <command>` (the launcher's way) with the test timings, at debug
 * level into the suite's log folder (scanned for secrets at the end); resolves once ready.
 */
async function startShiphookProcess(command: 'api' | 'worker', env: Record<string, string>): Promise<ShiphookProcess> {
  const file = logFile(inject('logDir'), `${command}-${process.pid}-${++started}`);
  const out = openSync(file, 'a');
  const launched = startShiphookChild({ command, env: { ...shiphookProcessEnv(), ...TEST_ENV, LOG_LEVEL: 'debug', ...env }, output: [out, out] });
  const child = launched.process;
  const ready = await launched.ready.catch((err: Error) => {
    // The log folder is gone after a CI run: its last lines go into the failure.
    const last = readFileSync(file, 'utf8').trimEnd().split('\n').slice(-LAST_LINES).join('\n');
    throw new Error(`${err.message}; see ${file}, which ends:\n${last}`);
  });
  return {
    child,
    logFile: file,
    httpPort: ready.httpPort,
    get logs() {
      return readFileSync(file, 'utf8').split('\n').filter(Boolean);
    },
    get alive() {
      return child.exitCode === null && child.signalCode === null;
    },
    stop: () => launched.stop(),
  };
}

export type IsolatedSystem = Awaited<ReturnType<typeof isolatedSystem>>;

/**
 * An API, a database and a task queue of its own: only workers this test starts
 * touch its events. `api` is served in this process (for setup and reads); `apiProcess()`
 * starts a real `shiphook api` child on the same database.
 */
export async function isolatedSystem({ env, ...config }: Partial<Config> & { env?: Record<string, string> } = {}) {
  const overrides = { ...config, env };
  const database = await isolatedDatabase(config.databaseUrl);
  const taskQueue = `isolated-${process.pid}-${Date.now()}`;
  const temporalAddress = config.temporalAddress ?? testConfig().temporalAddress!;
  const api = await startSystem({ ...config, databaseUrl: database.url, taskQueue, temporalAddress }).catch(async (err) => {
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
        SHIPHOOK_WORKFLOW_BUNDLE: await workflowBundleFile({ traced: Boolean(opts.env?.OTEL_EXPORTER_OTLP_ENDPOINT) }),
        ...opts.env,
      });
      processes.push(w);
      return w;
    },
    async worker(opts: { temporalAddress?: string; role?: WorkerRole; env?: Record<string, string> } = {}): Promise<WorkerProcess> {
      const p = await this.workerProcess(opts);
      return Object.assign(p.child, { httpPort: p.httpPort!, logFile: p.logFile });
    },
    /** A `shiphook api` process on this system (on `port`, e.g. the one of an api it replaces), and a handle for `call()`. */
    async apiProcess(opts: { port?: number; env?: Record<string, string> } = {}): Promise<ShiphookProcess & { sys: TestSystem; port: number }> {
      // PORT=0 unless told: a port probed free here could be taken by another test's process before the api binds it.
      const p = await startShiphookProcess('api', { ...baseEnv(), PORT: String(opts.port ?? 0), HOST: '127.0.0.1', SHIPHOOK_API_PROCESSES: '1', ...opts.env });
      processes.push(p);
      const port = p.httpPort!;
      const origin = `http://127.0.0.1:${port}`;
      return Object.assign(p, { port, sys: { ...api, origin, baseUrl: `${origin}/v2` } });
    },
    dispatchedAt: (eventId: string) => dispatchedAt(api, eventId),
    async close() {
      await Promise.all(processes.map((p) => p.stop()));
      await api.close();
      await database.drop();
    },
  };
}
