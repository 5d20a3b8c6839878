import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const CHILD = fileURLToPath(new URL('../support/main-thread-child.ts', import.meta.url));
const HISTORY = fileURLToPath(new URL('../fixtures/histories/2026-11-23-first-retry-timer-delivered.json', import.meta.url));

/**
 * The deliveries worker runs its workflows on its main thread (the SDK's debugMode,
 * src/temporal/workflow-sandbox.ts), where the SDK installs process-wide handlers that
 * patches/ tames. A process of its own does what a worker does (its crash handler,
 * then the workflow sandbox on its main thread with the worker's options) and then
 * meets a rejection outside any workflow.
 */
describe('workflows on the worker’s main thread', () => {
  it('keep the process’s own stack traces, and a stray rejection ends it masked, with no secret printed', async () => {
    const secret = `pw-${Date.now()}-hunter2`;
    const run = await exec(process.execPath, ['--import', 'tsx', CHILD, HISTORY, secret], { env: { ...process.env, LOG_LEVEL: 'info' } }).then(
      () => ({ code: 0, stdout: '', stderr: '' }),
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    const lines = run.stdout.trim().split('\n');
    const reported = lines.find((l) => l.includes('"sandbox"'));
    expect(reported, run.stderr).toBeDefined();
    const report = JSON.parse(reported!) as { sandbox: object; stack: string };
    expect(report.sandbox).toEqual({ isolateExecutionTimeout: 0, debugMode: true });
    // The SDK's Error.prepareStackTrace would print the transpiled position (line 1).
    const line = readFileSync(CHILD, 'utf8').split('\n').findIndex((l) => l.includes('STACK-LINE */')) + 1;
    expect(report.stack.split('\n')[1]).toContain(`main-thread-child.ts:${line}:`);
    // The rejection: exit 1, one masked log line, and the secret nowhere.
    expect(run.code).toBe(1);
    const crash = lines.map((l) => (l.startsWith('{') ? JSON.parse(l) : {})).find((l) => l.msg === 'uncaught exception; exiting');
    expect(crash?.error?.message).toContain('connection lost');
    expect(run.stdout + run.stderr).not.toContain(secret);
  }, 60_000);
});
