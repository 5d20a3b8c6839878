import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type ShiphookChild, startShiphookChild } from '../../src/launcher/child';
import { freePort } from '../../src/launcher/ports';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '../../src/launcher/postgres';
import { shiphookProcessEnv } from '../../src/launcher/process-env';
import { startTemporalServer, type TemporalServer } from './temporal-server/server';
import { duration } from '../../src/config';
import { createDb, type Db } from '../../src/db/database';
import { workflowBundleFile } from '../support/workflow-bundle';
import type { TestSystem } from '../support/system';
import { TEST_ENV } from '../support/test-config';
import { SERVICES, type ServiceName, type SharedEnv, serviceEnv, withoutSettings } from './topology';

const CLI = path.resolve('bin/shiphook.mjs');

/**
 * Timings and policies of the cluster's processes beside compose's environment: a fast
 * retry schedule, so a failing endpoint's events end `failed` within seconds, and no
 * webhook disabled during a scenario (its failing endpoint fails half of its events on
 * purpose, and a disabled webhook would end the other half `failed` too).
 */
export const CLUSTER_ENV = {
  SHIPHOOK_RETRY_DELAYS: '1s,2s,3s',
  SHIPHOOK_ATTEMPT_TIMEOUT: '10s',
  SHIPHOOK_DISABLE_AFTER_FAILURES: '1000000',
  SHIPHOOK_DISABLE_AFTER: '1h',
  // Loopback receivers over http, as `shiphook dev` allows.
  SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS: TEST_ENV.SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS,
  SHIPHOOK_WEBHOOK_ALLOW_HTTP: 'true',
  // A test key's budget is a quarter of this: 10 requests/s, which the rate-limit scenario exceeds.
  SHIPHOOK_RATE_LIMIT_PER_SECOND: '40',
  LOG_LEVEL: 'info',
};

/** Compose's `x-event-retention`: the events' and the namespace's retention. */
const EVENT_RETENTION = '720h';

/** The Temporal server of the cluster: killed and started again on its database by a scenario. */
export type ClusterTemporal = TemporalServer;

/**
 * The real server (temporal-server/server.ts) on a PostgreSQL of its own, its log beside the
 * processes'. Its data goes when it stops: the embedded PostgreSQL may keep it outside the
 * cluster's folder (when its user cannot enter the folder), where `close` would not remove it.
 */
const startClusterTemporal = (dir: string, logDir: string): Promise<ClusterTemporal> =>
  startTemporalServer({ dataDir: dir, logFile: path.join(logDir, 'temporal.log'), namespaceRetentionMs: duration(EVENT_RETENTION) });

/** shiphook's PostgreSQL, stopped and started again on its data by a scenario. */
export interface ClusterPostgres {
  readonly url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

async function startClusterPostgres(dir: string): Promise<ClusterPostgres> {
  const port = await freePort();
  let current: EmbeddedDatabase | undefined = await startEmbeddedPostgres(dir, { port, persistent: true });
  const url = current.url;
  return {
    url,
    async stop() {
      await current?.stop(); // SIGINT: PostgreSQL's fast shutdown
      current = undefined;
    },
    async start() { current = await startEmbeddedPostgres(dir, { port, persistent: true }); },
  };
}

/** One process of a shiphook service (an api or a worker). */
export interface ClusterProcess {
  service: ServiceName;
  label: string;
  /** The api's port (the same after a restart). */
  port?: number;
  /** As the test's `call()` sees an api. */
  sys: TestSystem;
  readonly child: ShiphookChild;
  readonly alive: boolean;
  /** `kill -9` of the process and any it started, and waits until it is gone. */
  kill(): Promise<void>;
  /** Starts it again (a replacement, as an orchestrator would), and waits until it is ready. */
  restart(): Promise<void>;
}

export interface Cluster {
  temporal: ClusterTemporal;
  postgres: ClusterPostgres;
  /** The test's own connection to shiphook's database (reads only). */
  db: Db;
  apis: ClusterProcess[];
  workers: ClusterProcess[];
  retryWorkers: ClusterProcess[];
  /** Where each process's log is (`<label>.log`). */
  logDir: string;
  /** A process's last log lines, for a failure's message. */
  lastWords(p: ClusterProcess, lines?: number): string;
  /** Keeps the logs when the cluster closes: a failure names them. */
  keepLogs(): void;
  close(): Promise<void>;
}

/**
 * Starts the production topology of docker-compose.yml as separate processes on this
 * machine: shiphook's PostgreSQL, migrated by `shiphook migrate`; the Temporal server;
 * every shiphook service of topology.ts with compose's environment names. Resolves once
 * every api listens and every worker polls.
 */
export async function startCluster(): Promise<Cluster> {
  const dir = mkdtempSync(path.join(tmpdir(), 'shiphook-cluster-'));
  const logDir = path.join(dir, 'logs');
  mkdirSync(logDir);
  const stops: (() => Promise<void>)[] = [];
  let keep = !!process.env.SHIPHOOK_KEEP_TEST_LOGS;
  const close = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    if (!keep) rmSync(dir, { recursive: true, force: true });
  };
  try {
    // Each stopped by `close` as soon as it started, whether or not the other did.
    const both = await Promise.allSettled([startClusterPostgres(dir), startClusterTemporal(dir, logDir)]);
    for (const r of both) if (r.status === 'fulfilled') stops.push(() => r.value.stop());
    const failed = both.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const [postgres, temporal] = both.map((r) => (r as PromiseFulfilledResult<unknown>).value) as [ClusterPostgres, ClusterTemporal];
    await promisify(execFile)(process.execPath, [CLI, SERVICES.migrate.command], { env: { ...withoutSettings(process.env), DATABASE_URL: postgres.url } });
    const db = createDb(postgres.url, 4);
    stops.push(() => db.destroy());
    const bundle = await workflowBundleFile();

    const shared = (port: number): SharedEnv => ({
      DATABASE_URL: postgres.url,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: 'default',
      SHIPHOOK_ADMIN_TOKEN: TEST_ENV.SHIPHOOK_ADMIN_TOKEN,
      HOST: '127.0.0.1',
      PORT: String(port),
      SHIPHOOK_WORKER_HTTP_HOST: '127.0.0.1',
      SHIPHOOK_WORKER_HTTP_PORT: '0',
      SHIPHOOK_EVENT_RETENTION: EVENT_RETENTION,
    });
    const processes: ClusterProcess[] = [];
    const start = async (service: Exclude<ServiceName, 'migrate'>, index: number): Promise<ClusterProcess> => {
      const spec = SERVICES[service];
      const label = `${service}-${index + 1}`;
      const port = spec.command === 'api' ? await freePort() : 0;
      const env = shiphookProcessEnv(serviceEnv(service, shared(port), { ...CLUSTER_ENV, ...('role' in spec ? { SHIPHOOK_WORKFLOW_BUNDLE: bundle } : {}) }));
      const launch = () => {
        const out = openSync(path.join(logDir, `${label}.log`), 'a');
        return startShiphookChild({ command: spec.command, label, env, output: [out, out] });
      };
      let child = launch();
      const origin = `http://127.0.0.1:${port}`;
      const p: ClusterProcess = {
        service,
        label,
        port: spec.command === 'api' ? port : undefined,
        // `call()` reads only the origin and base URL of an api.
        sys: { origin, baseUrl: `${origin}/v2` } as TestSystem,
        get child() { return child; },
        get alive() { return child.process.exitCode === null && child.process.signalCode === null; },
        async kill() {
          const exited = new Promise((r) => child.process.once('exit', r));
          // Its whole process group (it leads one: `detached`), as a container's death takes every process in it.
          process.kill(-child.process.pid!, 'SIGKILL');
          await exited;
        },
        async restart() {
          await child.stop();
          child = launch();
          await child.ready;
        },
      };
      processes.push(p);
      stops.push(() => child.stop());
      return p;
    };
    const replicas = (service: Exclude<ServiceName, 'migrate'>) => Promise.all(Array.from({ length: SERVICES[service].replicas }, (_, i) => start(service, i)));
    const [apis, workers, retryWorkers] = await Promise.all([replicas('api'), replicas('worker'), replicas('worker-retries')]);
    const lastWords = (p: ClusterProcess, lines = 15) =>
      `\n--- ${p.label} (${p.alive ? 'running' : 'exited'}):\n` + readFileSync(path.join(logDir, `${p.label}.log`), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    await Promise.all(processes.map((p) => p.child.ready.catch((err: Error) => Promise.reject(new Error(`${err.message}${lastWords(p)}`)))));
    const keepLogs = () => void (keep = true);
    return { temporal, postgres, db, apis, workers, retryWorkers, logDir, lastWords, keepLogs, close };
  } catch (err) {
    await close();
    throw err;
  }
}
