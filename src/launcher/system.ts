import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { WorkerRole } from '../config';
import { type Output, type RestartPolicy, type ShiphookChild, startShiphookChild } from './child';
import { type Infrastructure, type InfrastructureOptions, startInfrastructure } from './infrastructure';
import { LaunchError } from './launch-error';
import { assertPortsFree } from './ports';
import { shiphookProcessEnv } from './process-env';

const CLI = fileURLToPath(new URL('../../bin/shiphook.mjs', import.meta.url));

export interface WorkerSpec {
  /** `worker`, `worker-retries`, …: names it in logs and messages. */
  label?: string;
  role: WorkerRole;
  env?: NodeJS.ProcessEnv;
  nice?: number;
}

export interface SystemOptions extends InfrastructureOptions {
  /** Environment of the api and worker processes (on top of the launcher's own). */
  env: NodeJS.ProcessEnv;
  /** Start `shiphook api` on this host and port (the caller checked nothing; this checks it is free). */
  api?: { host: string; port: number; env?: NodeJS.ProcessEnv };
  workers?: WorkerSpec[];
  /** Restart api and workers that die (dev); without it a death calls `onChildDied`. */
  restart?: RestartPolicy;
  /** An api or worker died for good, or an embedded service (PostgreSQL, the Temporal dev server) exited. */
  onChildDied?: (reason: string) => void;
  /** stdout and stderr of the api and workers (default: inherited). */
  output?: [Output, Output];
  /** Extra node flags per process label (the bench's CPU profiles). */
  nodeArgs?: (label: string) => string[];
}

export interface ShiphookSystem extends Infrastructure {
  /** The env the api and workers run with (DATABASE_URL and TEMPORAL_ADDRESS included). */
  env: NodeJS.ProcessEnv;
  api?: ShiphookChild & { origin: string };
  workers: ShiphookChild[];
  /** Starts one more worker of this system and waits until it polls. */
  startWorker(spec: WorkerSpec): Promise<ShiphookChild>;
}

/**
 * The one way shiphook is brought up, for `shiphook dev`, the test suite and the
 * bench: its services (embedded or named by the environment), the migrations, then
 * the api and worker processes, each ready (api listening, worker polling) before
 * this resolves. Fixed ports are checked before anything starts; if any step fails,
 * everything started so far is stopped before the error is thrown.
 */
export async function startSystem(opts: SystemOptions): Promise<ShiphookSystem> {
  if (opts.api) await assertPortsFree([{ port: opts.api.port, host: opts.api.host, name: 'the API', variable: 'PORT' }]);
  const infra = await startInfrastructure(opts);
  const children: ShiphookChild[] = [];
  const env: NodeJS.ProcessEnv = { ...shiphookProcessEnv(), ...opts.env, DATABASE_URL: infra.databaseUrl, TEMPORAL_ADDRESS: infra.temporalAddress };
  const child = (command: 'api' | 'worker', label: string, extraEnv: NodeJS.ProcessEnv = {}, nice?: number) => {
    const c = startShiphookChild({
      command,
      label,
      env: { ...env, ...extraEnv },
      nice,
      output: opts.output,
      nodeArgs: opts.nodeArgs?.(label),
      restart: opts.restart,
      onGiveUp: opts.onChildDied,
    });
    children.push(c);
    return c;
  };
  const startWorker = async (spec: WorkerSpec) => {
    const w = child('worker', spec.label ?? `worker-${spec.role}`, { ...spec.env, SHIPHOOK_WORKER_ROLE: spec.role }, spec.nice);
    await w.ready;
    return w;
  };
  const stop = async () => {
    await Promise.allSettled(children.map((c) => c.stop()));
    await infra.stop();
  };
  try {
    // Through the CLI, exactly as an operator migrates (and loadable from any host process).
    await promisify(execFile)(process.execPath, [CLI, 'migrate'], { env });
    const workers = (opts.workers ?? []).map((spec) => child('worker', spec.label ?? `worker-${spec.role}`, { ...spec.env, SHIPHOOK_WORKER_ROLE: spec.role }, spec.nice));
    const api = opts.api ? child('api', 'api', { ...opts.api.env, HOST: opts.api.host, PORT: String(opts.api.port) }) : undefined;
    // A service that dies now would leave the workers waiting for it for ever: fail with its last words.
    const serviceDied = infra.died.then((reason) => Promise.reject(new LaunchError(reason)));
    serviceDied.catch(() => undefined);
    await Promise.race([Promise.all([...workers, ...(api ? [api] : [])].map((c) => c.ready)), serviceDied]);
    void infra.died.then((reason) => opts.onChildDied?.(reason));
    return {
      ...infra,
      env,
      api: api && Object.assign(api, { origin: `http://${opts.api!.host}:${opts.api!.port}` }),
      workers,
      startWorker,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
