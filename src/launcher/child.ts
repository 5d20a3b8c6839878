import { type ChildProcess, spawn, type StdioOptions } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { log } from '../log';
import { NODE_FLAGS } from './process-env';

const CLI = fileURLToPath(new URL('../../bin/shiphook.mjs', import.meta.url));

/** What a shiphook process says on its IPC channel once it serves (api: listening; worker: polling). */
export interface ReadyMessage {
  ready: true;
  /** The port its HTTP listener bound (api: the API; worker: /healthz, /readyz, /metrics): the real one when asked for 0. */
  httpPort?: number;
  [detail: string]: unknown;
}

export interface RestartPolicy {
  /** Give up (and let the launcher stop everything) after this many crashes … */
  maxCrashes: number;
  /** … within this long. */
  windowMs: number;
}

/** Where a child's stdout or stderr goes: inherited, dropped, a file descriptor, or a pipe the caller reads (`process.stdout`). */
export type Output = 'inherit' | 'ignore' | 'pipe' | number;

export interface ShiphookChildOptions {
  command: 'api' | 'worker';
  /** For logs and messages: `api`, `worker`, `worker-retries`. */
  label?: string;
  env: NodeJS.ProcessEnv;
  /** Node flags beside NODE_FLAGS (the bench's CPU profiles). */
  nodeArgs?: string[];
  /** CPU priority (the bench runs the retries worker at 10). */
  nice?: number;
  /** Where its stdout and stderr go (default: both inherited). */
  output?: [Output, Output];
  /** Start it again when it dies unexpectedly (dev); without it, a death is only reported. */
  restart?: RestartPolicy;
  /** It died for good: unexpectedly without a restart policy, or too often with one. */
  onGiveUp?: (reason: string) => void;
}

export interface ShiphookChild {
  readonly label: string;
  /** The current process (a new one after a restart). */
  readonly process: ChildProcess;
  /** The ready message of the current process; rejects if it exits before it is ready. */
  readonly ready: Promise<ReadyMessage>;
  /** How often it was restarted after dying. */
  readonly restarts: number;
  stop(): Promise<void>;
}

/**
 * Starts `shiphook api` or `shiphook worker` as a child process — the one way the dev
 * launcher, the test suite and the bench start them. The child runs in its own
 * process group, so a Ctrl-C in the terminal reaches only the launcher, which stops
 * the children before the services they use; a child whose launcher is gone exits
 * by itself (its IPC channel closes, see src/cli/parent.ts).
 */
export function startShiphookChild(opts: ShiphookChildOptions): ShiphookChild {
  const label = opts.label ?? opts.command;
  let stopping = false;
  let restarts = 0;
  const crashes: number[] = [];
  let current!: ChildProcess;
  let ready!: Promise<ReadyMessage>;

  const launch = () => {
    const child = spawn(process.execPath, [...NODE_FLAGS, ...(opts.nodeArgs ?? []), CLI, opts.command], {
      env: opts.env,
      detached: true,
      stdio: ['ignore', ...(opts.output ?? ['inherit', 'inherit']), 'ipc'] as StdioOptions,
    });
    current = child;
    if (opts.nice && child.pid) setNice(child.pid, opts.nice);
    ready = new Promise<ReadyMessage>((resolve, reject) => {
      child.on('message', (m: Partial<ReadyMessage>) => m?.ready && resolve(m as ReadyMessage));
      child.once('exit', (code, signal) => reject(new Error(`shiphook ${label} exited (${signal ?? code}) before it was ready`)));
    });
    ready.catch(() => undefined); // observed by whoever waits; a restart replaces it
    child.once('exit', (code, signal) => {
      if (stopping) return;
      const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
      if (!opts.restart) return opts.onGiveUp?.(`shiphook ${label} ${how}`);
      const now = Date.now();
      crashes.push(now);
      while (crashes.length && crashes[0]! < now - opts.restart.windowMs) crashes.shift();
      if (crashes.length >= opts.restart.maxCrashes) {
        return opts.onGiveUp?.(`shiphook ${label} ${how}, its ${crashes.length}th crash within ${Math.round(opts.restart.windowMs / 1000)} s; giving up`);
      }
      const delayMs = Math.min(30_000, 1000 * 2 ** (crashes.length - 1));
      log.warn('child process died; restarting it', { process: label, pid: child.pid, exit: how, restart_in_ms: delayMs });
      setTimeout(() => {
        if (stopping) return;
        restarts++;
        launch();
      }, delayMs).unref();
    });
  };
  launch();

  return {
    label,
    get process() { return current; },
    get ready() { return ready; },
    get restarts() { return restarts; },
    async stop() {
      stopping = true;
      await stopProcess(current);
    },
  };
}

/**
 * Lowers a child's CPU priority. The child leads its own session (`detached`), and where
 * Linux groups tasks by session (`kernel.sched_autogroup_enabled`, the default of most
 * distributions without a cgroup CPU controller) a task's nice value only weighs it
 * against its own session's other tasks: every session gets an equal share. So the
 * session's weight is set too (`/proc/<pid>/autogroup`), or a niced child would compete
 * with the api, the worker and the servers as an equal. Linux only; elsewhere (or
 * without autogroups) the process's nice value is all there is.
 */
export function setNice(pid: number, nice: number): void {
  os.setPriority(pid, nice);
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch {
    // not Linux, autogroups compiled out, or the child already gone: nothing to weigh
  }
}

/**
 * Stops a process: `signal` (SIGTERM by default), then SIGKILL to its whole process
 * group after `graceMs`. Resolves when it has exited.
 */
export function stopProcess(child: ChildProcess, { signal = 'SIGTERM', graceMs = 8000 }: { signal?: NodeJS.Signals; graceMs?: number } = {}): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL'); // the group: an api's cluster workers too
      } catch {
        child.kill('SIGKILL');
      }
    }, graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}

/** The last `maxChars` a process wrote to stderr (its "last words" when it fails). */
export function stderrTail(child: ChildProcess, maxChars: number): { text(): string; clear(): void } {
  let text = '';
  child.stderr?.on('data', (d: Buffer) => { text = (text + d.toString()).slice(-maxChars); });
  return { text: () => text, clear: () => void (text = '') };
}

/** A service process the launcher started (PostgreSQL, the Temporal dev server), watched for an exit nobody asked for. */
export interface WatchedService {
  /** Resolves with `<name> exited (<code or signal>): <its last words>` if it exits other than by `stop()`; otherwise never. */
  died: Promise<string>;
  /** Stops it on purpose (`stopProcess`): not a death. */
  stop(opts?: Parameters<typeof stopProcess>[1]): Promise<void>;
}

export function watchService(child: ChildProcess, name: string, lastWords: () => string): WatchedService {
  let wanted = true;
  const died = new Promise<string>((resolve) => {
    child.once('exit', async (code, signal) => {
      if (!wanted) return;
      // 'exit' can come before the last of its stderr was read: wait for the end of it, briefly
      // (not for ever: PostgreSQL's orphaned backends may hold the pipe open).
      const stderr = child.stderr;
      if (stderr && !stderr.readableEnded) await new Promise((r) => { stderr.once('end', r); setTimeout(r, 200).unref(); });
      resolve(`${name} exited (${signal ?? code}): ${lastWords() || 'no output'}`);
    });
  });
  return {
    died,
    stop: (opts) => {
      wanted = false;
      return stopProcess(child, opts);
    },
  };
}
