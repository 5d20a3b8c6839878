import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../src/launcher/ports';
import { eventually } from '../support/receiver';

const CLI = path.resolve('bin/shiphook.mjs');

/** `shiphook dev` run as a user runs it, in a process group of its own (a terminal's job). */
export interface DevProcess {
  child: ChildProcess;
  env: NodeJS.ProcessEnv;
  ports: { api: number; postgres: number; temporal: number; ui: number; worker: number };
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Ctrl-C in the terminal: SIGINT to the whole foreground process group. */
  interrupt(): void;
}

export async function devPorts() {
  return { api: await freePort(), postgres: await freePort(), temporal: await freePort(), ui: await freePort(), worker: await freePort() };
}

export function startDev(dataDir: string, ports: DevProcess['ports'], extraEnv: NodeJS.ProcessEnv = {}): DevProcess {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SHIPHOOK_DATA_DIR: dataDir,
    PORT: String(ports.api),
    SHIPHOOK_PG_PORT: String(ports.postgres),
    SHIPHOOK_TEMPORAL_PORT: String(ports.temporal),
    SHIPHOOK_TEMPORAL_UI_PORT: String(ports.ui),
    SHIPHOOK_WORKER_HTTP_PORT: String(ports.worker),
    DATABASE_URL: '',
    TEMPORAL_ADDRESS: '',
    LOG_LEVEL: 'info',
    ...extraEnv,
  };
  const child = spawn(process.execPath, [CLI, 'dev'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    env,
    ports,
    stdout: () => out,
    stderr: () => err,
    exited,
    interrupt: () => process.kill(-child.pid!, 'SIGINT'),
  };
}

/** Waits for the banner; fails early with the launcher's own words if it exits first. */
export async function untilReady(dev: DevProcess, timeoutMs = 120_000): Promise<void> {
  let gone = false;
  void dev.exited.then(() => (gone = true));
  await eventually(async () => {
    if (gone) throw new Error(`shiphook dev exited before it was ready:\n${dev.stderr()}\n${dev.stdout()}`);
    return /shiphook is ready in/.test(dev.stdout()) ? true : undefined;
  }, timeoutMs, 'shiphook dev to be ready');
}

/**
 * Live processes whose command line or environment mentions `text`: every process
 * a launcher started inherits SHIPHOOK_DATA_DIR, so the data dir finds them all.
 */
export function processesMentioning(text: string): { pid: number; cmd: string }[] {
  const found: { pid: number; cmd: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if ((cmd.includes(text) || environ.includes(text)) && state !== 'Z') found.push({ pid: Number(entry), cmd });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The lines of a Node stack trace. */
export const STACK_LINE = /^\s+at .+\(?.*:\d+:\d+\)?$/m;
