import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, waitForPort } from '../src/launcher/free-port';
import { startInfrastructure } from '../src/launcher/infrastructure';
import { stopChild } from '../src/launcher/temporal';
import { findPids } from './processes';

const CLI = path.resolve('bin/shiphook.mjs');
export const ADMIN_TOKEN = 'bench-admin-token';

/** The system as production runs it: separate api and worker processes, real services. */
export interface BenchSystem {
  origin: string;
  temporalAddress: string;
  databaseUrl: string;
  pids: Record<string, number>;
  stop(): Promise<void>;
}

export async function startBenchSystem(env: Record<string, string>): Promise<BenchSystem> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'shiphook-bench-'));
  const infra = await startInfrastructure({
    dataDir,
    databaseUrl: process.env.DATABASE_URL,
    temporalAddress: process.env.TEMPORAL_ADDRESS,
    temporalCliPath: process.env.TEMPORAL_CLI_PATH,
    persistent: false,
    ui: false,
  });
  const port = await freePort();
  const childEnv = {
    ...process.env,
    DATABASE_URL: infra.databaseUrl,
    TEMPORAL_ADDRESS: infra.temporalAddress,
    SHIPHOOK_ADMIN_TOKEN: ADMIN_TOKEN,
    SHIPHOOK_ALLOW_INSECURE_WEBHOOKS: 'true',
    SHIPHOOK_TASK_QUEUE: 'shiphook-bench',
    LOG_LEVEL: 'warn',
    PORT: String(port),
    ...env,
  };
  const children: ChildProcess[] = [];
  try {
    execFileSync(process.execPath, [CLI, 'migrate'], { env: childEnv, stdio: ['ignore', 'ignore', 'inherit'] });
    const worker = spawn(process.execPath, [CLI, 'worker'], { env: childEnv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    children.push(worker);
    await new Promise<void>((resolve, reject) => {
      worker.on('message', (m: { ready?: boolean }) => m?.ready && resolve());
      worker.once('exit', (code) => reject(new Error(`worker exited (${code})`)));
    });
    const api = spawn(process.execPath, [CLI, 'api'], { env: childEnv, stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(api);
    await waitForPort(port);
    const temporalPort = infra.temporalAddress.split(':').pop()!;
    const temporalPid = findPids((c) => c.includes('start-dev') && c.includes(`--port ${temporalPort}`))[0];
    return {
      origin: `http://127.0.0.1:${port}`,
      temporalAddress: infra.temporalAddress,
      databaseUrl: infra.databaseUrl,
      pids: { api: api.pid!, worker: worker.pid!, ...(temporalPid ? { temporal: temporalPid } : {}) },
      async stop() {
        await Promise.allSettled(children.map((c) => stopChild(c)));
        await infra.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await Promise.allSettled(children.map((c) => stopChild(c)));
    await infra.stop();
    throw err;
  }
}
