import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** `npx shiphook …` as a developer runs it: its own process, its own data dir, no database settings. */
const CLI = new URL('../../bin/shiphook.mjs', import.meta.url).pathname;

function cliEnv(dataDir: string, env: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _d, TEMPORAL_ADDRESS: _t, SHIPHOOK_API_KEY: _k, ...base } = process.env;
  return { ...base, SHIPHOOK_DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env };
}

export const freshDataDir = () => mkdtempSync(path.join(tmpdir(), 'shiphook-cli-'));

/** A command that ends: its exit code and output. */
export function shiphook(args: string[], opts: { dataDir?: string; env?: Record<string, string> } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: cliEnv(opts.dataDir ?? freshDataDir(), opts.env ?? {}), timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** A command that runs until stopped (`listen`): its output as it comes. */
export interface Running {
  child: ChildProcess;
  /** Every line of stdout so far. */
  lines: string[];
  stderr(): string;
  /** The first line of stdout matching `pattern`, waiting for it. */
  line(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Waits for the exit: its code (null after a signal). */
  exited(timeoutMs?: number): Promise<number | null>;
}

export function startShiphook(args: string[], opts: { dataDir?: string; env?: Record<string, string> } = {}): Running {
  const child = spawn(process.execPath, [CLI, ...args], { env: cliEnv(opts.dataDir ?? freshDataDir(), opts.env ?? {}), stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  let errors = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString('utf8')).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
  });
  child.stderr!.on('data', (chunk: Buffer) => void (errors += chunk.toString('utf8')));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const within = <T>(what: Promise<T>, ms: number, failure: () => string) =>
    Promise.race([what, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(failure())), ms).unref())]);
  return {
    child,
    lines,
    stderr: () => errors,
    async line(pattern, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = lines.map((l) => l.match(pattern)).find((m) => m);
        if (found) return found;
        if (child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`no line matching ${pattern} from shiphook ${args[0]} (exit ${child.exitCode}):\n${lines.join('\n')}\nstderr: ${errors}`);
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    exited: (timeoutMs = 15_000) => within(exit, timeoutMs, () => `shiphook ${args[0]} did not exit:\n${lines.join('\n')}\nstderr: ${errors}`),
  };
}
