import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { freePort, waitForPort } from '../src/launcher/free-port';
import { startInfrastructure } from '../src/launcher/infrastructure';
import { shiphookProcessEnv } from '../src/launcher/process-env';
import { stopChild } from '../src/launcher/temporal';
import { findPids } from './processes';

const CLI = path.resolve('bin/shiphook.mjs');
export const ADMIN_TOKEN = 'bench-admin-token';
/** Nice value of the retries worker (0 = normal, 19 = lowest). */
const RETRY_WORKER_NICE = 10;

/** The system as production runs it: separate api and worker processes, real services. */
export interface BenchSystem {
  origin: string;
  temporalAddress: string;
  databaseUrl: string;
  temporal: Client;
  /** Mutable: `restartWorkers` replaces the workers' pids. */
  pids: Record<string, number>;
  /** The embedded PostgreSQL server (its backends are its children); unset for an external one. */
  postgresPid?: number;
  /** Restarts both workers with extra env (the retry schedule is fixed by the dispatcher at workflow start). */
  restartWorkers(env: Record<string, string>): Promise<void>;
  /** Delivery workflows still running (all accounts, or one user's). */
  runningDeliveries(userId?: string): Promise<number>;
  stop(): Promise<void>;
}

/** `profileDir`: api and worker write V8 CPU profiles there (`--cpu-prof`) when they stop. */
export async function startBenchSystem(env: Record<string, string>, opts: { profileDir?: string } = {}): Promise<BenchSystem> {
  const node = (command: string, label = command) => [...(opts.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(opts.profileDir, label)}`] : []), CLI, command];
  const dataDir = mkdtempSync(path.join(tmpdir(), 'shiphook-bench-'));
  const children = new Set<ChildProcess>();
  let client: Client | undefined;
  let infra: Awaited<ReturnType<typeof startInfrastructure>> | undefined;
  const stop = async () => {
    await client?.connection.close().catch(() => undefined);
    await Promise.allSettled([...children].map((c) => stopChild(c)));
    await infra?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    infra = await startInfrastructure({
      dataDir,
      databaseUrl: process.env.DATABASE_URL,
      temporalAddress: process.env.TEMPORAL_ADDRESS,
      temporalCliPath: process.env.TEMPORAL_CLI_PATH,
      persistent: false,
      ui: false,
      statementStats: true,
    });
    const port = await freePort();
    const childEnv = {
      ...shiphookProcessEnv(),
      DATABASE_URL: infra.databaseUrl,
      TEMPORAL_ADDRESS: infra.temporalAddress,
      SHIPHOOK_ADMIN_TOKEN: ADMIN_TOKEN,
      SHIPHOOK_ALLOW_INSECURE_WEBHOOKS: 'true',
      // Its own task queue, so a shared TEMPORAL_ADDRESS never hands our tasks to another worker.
      SHIPHOOK_TASK_QUEUE: 'shiphook-bench',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      SHIPHOOK_WORKER_HTTP_PORT: '0', // two workers on one host: each its own free port
      // One API process per core, as production is advised to run it.
      SHIPHOOK_API_PROCESSES: 'auto',
      ...env,
    };
    const track = (child: ChildProcess) => {
      children.add(child);
      child.once('exit', () => children.delete(child));
      return child;
    };
    execFileSync(process.execPath, [CLI, 'migrate'], { env: childEnv, stdio: ['ignore', 'ignore', 'inherit'] });
    // As production is advised to run it: first attempts in one worker, retries in another
    // at a lower CPU priority, so an endpoint that is down only gets capacity left over.
    const startWorker = async (role: 'deliveries' | 'retries', extra: Record<string, string> = {}) => {
      const child = track(spawn(process.execPath, node('worker', `worker-${role}`), { env: { ...childEnv, ...extra, SHIPHOOK_WORKER_ROLE: role }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }));
      await new Promise<void>((resolve, reject) => {
        child.on('message', (m: { ready?: boolean }) => m?.ready && resolve());
        child.once('exit', (code) => reject(new Error(`${role} worker exited (${code})`)));
      });
      if (role === 'retries') os.setPriority(child.pid!, RETRY_WORKER_NICE);
      return child;
    };
    let worker = await startWorker('deliveries');
    let retryWorker = await startWorker('retries');
    const startApi = async (extra: Record<string, string>) => {
      const api = track(spawn(process.execPath, node('api'), { env: { ...childEnv, ...extra }, stdio: ['ignore', 'ignore', 'inherit'] }));
      await waitForPort(port);
      return api;
    };
    const api = await startApi({});
    const temporalPort = infra.temporalAddress.split(':').pop()!;
    const temporalPid = findPids((c) => c.includes('start-dev') && c.includes(`--port ${temporalPort}`))[0];
    const pgPort = new URL(infra.databaseUrl).port;
    const postgresPid = infra.started.postgres ? findPids((c) => /\/postgres .*-p /.test(c) && c.includes(`-p ${pgPort}`))[0] : undefined;
    const pids: Record<string, number> = { api: api.pid!, worker: worker.pid!, retry_worker: retryWorker.pid!, ...(temporalPid ? { temporal: temporalPid } : {}) };
    client = new Client({ connection: await Connection.connect({ address: infra.temporalAddress }), namespace: 'default' });
    const temporal = client;
    return {
      origin: `http://127.0.0.1:${port}`,
      temporalAddress: infra.temporalAddress,
      databaseUrl: infra.databaseUrl,
      temporal,
      pids,
      postgresPid,
      async restartWorkers(extra) {
        await Promise.all([stopChild(worker), stopChild(retryWorker)]);
        [worker, retryWorker] = await Promise.all([startWorker('deliveries', extra), startWorker('retries', extra)]);
        pids.worker = worker.pid!;
        pids.retry_worker = retryWorker.pid!;
      },
      async runningDeliveries(userId) {
        const byUser = userId ? ` AND ShiphookUserId = "${userId}"` : '';
        return (await temporal.workflow.count(`WorkflowType = "deliverEvent" AND ExecutionStatus = "Running"${byUser}`)).count;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
