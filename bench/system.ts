import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { freePort } from '../src/launcher/ports';
import { type ShiphookSystem, startSystem, type WorkerSpec } from '../src/launcher/system';
import { findPids } from './processes';

export const ADMIN_TOKEN = 'bench-admin-token-of-at-least-32-characters';
/** Nice value of the retries worker (0 = normal, 19 = lowest). */
const RETRY_WORKER_NICE = 10;

/** The system as production runs it: separate api and worker processes, real services. */
export interface BenchSystem {
  origin: string;
  temporalAddress: string;
  databaseUrl: string;
  temporal: Client;
  /** The dev server's SQLite file; unset while its store is in memory (`temporalMemory`). */
  temporalDbFile?: string;
  /** The embedded dev server's Prometheus endpoint; unset for an external TEMPORAL_ADDRESS. */
  temporalMetricsUrl?: string;
  /** Every process of the system by name (after `restartWorkers`, the new workers), the embedded PostgreSQL with its backends too: what CPU and memory are summed over. */
  processes(): Record<string, number>;
  /** Restarts both workers with extra env (the retry schedule is fixed by the dispatcher at workflow start). */
  restartWorkers(env: Record<string, string>): Promise<void>;
  /** Delivery workflows still at work (all accounts, or one user's): a failed event's run, open until a replay, is not. */
  runningDeliveries(userId?: string): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Which processes run. `machine` (the default): what one machine is advised to run
 * (docs/operations.md), one api process and one worker of role `all`. `npm-start`: the
 * same as `shiphook dev` starts it, with the Temporal UI and a PostgreSQL that syncs to
 * disk. `compose`: docker-compose.yml's shape, first attempts and retries in two workers,
 * the retries one at a lower CPU priority (compose: cpu_shares).
 */
export const TOPOLOGIES = ['machine', 'npm-start', 'compose'] as const;
export type Topology = (typeof TOPOLOGIES)[number];

/**
 * `profileDir`: api and worker write V8 CPU profiles there (`--cpu-prof`) when they stop.
 * `onDied`: a process of the system (api, worker, PostgreSQL, Temporal) died after the start.
 * `temporalMemory`: the embedded dev server keeps its store in memory instead of in a file (as `shiphook dev` keeps it).
 */
export async function startBenchSystem(env: Record<string, string>, opts: { profileDir?: string; onDied?: (reason: string) => void; temporalMemory?: boolean; topology?: Topology } = {}): Promise<BenchSystem> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'shiphook-bench-'));
  const topology = opts.topology ?? 'machine';
  const temporalDbFile = opts.temporalMemory || process.env.TEMPORAL_ADDRESS ? undefined : path.join(dataDir, 'temporal.db');
  let client: Client | undefined;
  let system: ShiphookSystem | undefined;
  const stop = async () => {
    await client?.connection.close().catch(() => undefined);
    await system?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    const temporalMetricsPort = process.env.TEMPORAL_ADDRESS ? undefined : await freePort();
    const workers = (extra: Record<string, string> = {}): WorkerSpec[] =>
      topology === 'compose'
        ? [
            { label: 'worker-deliveries', role: 'deliveries', env: extra },
            { label: 'worker-retries', role: 'retries', env: extra, nice: RETRY_WORKER_NICE },
          ]
        : [{ label: 'worker', role: 'all', env: extra }];
    system = await startSystem({
      dataDir,
      databaseUrl: process.env.DATABASE_URL,
      temporalAddress: process.env.TEMPORAL_ADDRESS,
      temporalCliPath: process.env.TEMPORAL_CLI_PATH,
      persistent: topology === 'npm-start',
      temporalDbFile,
      ui: topology === 'npm-start',
      temporalMetricsPort,
      statementStats: true,
      env: {
        SHIPHOOK_ADMIN_TOKEN: ADMIN_TOKEN,
        // Local receivers over http on loopback, as `shiphook dev` allows.
        SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
        SHIPHOOK_WEBHOOK_ALLOW_HTTP: 'true',
        // The bench measures throughput, so the API's rate limits are off unless SHIPHOOK_RATE_LIMIT_PER_SECOND is set (to measure their cost).
        SHIPHOOK_RATE_LIMIT_PER_SECOND: process.env.SHIPHOOK_RATE_LIMIT_PER_SECOND ?? '0',
        // Its own task queue, so a shared TEMPORAL_ADDRESS never hands our tasks to another worker.
        SHIPHOOK_TASK_QUEUE: 'shiphook-bench',
        LOG_LEVEL: 'warn',
        SHIPHOOK_WORKER_HTTP_PORT: '0', // two workers on one host: each its own free port
        ...env,
      },
      api: { host: '127.0.0.1', port },
      workers: workers(),
      output: ['ignore', 'inherit'],
      nodeArgs: (label) => (opts.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(opts.profileDir, label)}`] : []),
      onChildDied: (reason) => (opts.onDied ? opts.onDied(reason) : process.stderr.write(`[bench] ${reason}\n`)),
    });
    const sys = system;
    let running = sys.workers;
    const temporalPort = sys.temporalAddress.split(':').pop()!;
    const temporalPid = findPids((c) => c.includes('start-dev') && c.includes(`--port ${temporalPort}`))[0];
    const pgPort = new URL(sys.databaseUrl).port;
    const postgresPid = sys.started.postgres ? findPids((c) => /\/postgres .*-p /.test(c) && c.includes(`-p ${pgPort}`))[0] : undefined;
    // `worker` (and `retry_worker` in the compose topology): the names the cost figures use.
    const workerPids = () => Object.fromEntries(running.map((w, i) => [i ? 'retry_worker' : 'worker', w.process.pid!]));
    const pids: Record<string, number> = { api: sys.api!.process.pid!, ...workerPids(), ...(temporalPid ? { temporal: temporalPid } : {}) };
    client = new Client({ connection: await Connection.connect({ address: sys.temporalAddress }), namespace: 'default' });
    const temporal = client;
    return {
      origin: sys.api!.origin,
      temporalAddress: sys.temporalAddress,
      temporalDbFile,
      temporalMetricsUrl: temporalMetricsPort ? `http://127.0.0.1:${temporalMetricsPort}/metrics` : undefined,
      databaseUrl: sys.databaseUrl,
      temporal,
      processes: () => ({ ...pids, ...(postgresPid ? { postgres: postgresPid } : {}) }),
      async restartWorkers(extra) {
        await Promise.all(running.map((w) => w.stop()));
        running = await Promise.all(workers(extra).map((spec) => sys.startWorker(spec)));
        Object.assign(pids, workerPids());
      },
      async runningDeliveries(userId) {
        const byUser = userId ? ` AND ShiphookUserId = "${userId}"` : '';
        return (await temporal.workflow.count(`WorkflowType = "deliverEvent" AND ExecutionStatus = "Running" AND (ShiphookEventStatus IS NULL OR ShiphookEventStatus != "failed")${byUser}`)).count;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * A connection of the bench's own to the system's database (statement counts, event
 * timings). Its errors surface in its queries; the listener keeps a server that goes
 * away (the system stopping after a process died) from being an uncaught error.
 */
export async function benchDb(sys: { databaseUrl: string }): Promise<pg.Client> {
  const db = new pg.Client({ connectionString: sys.databaseUrl });
  db.on('error', () => undefined);
  await db.connect();
  return db;
}
