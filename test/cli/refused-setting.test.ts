import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const CLI = new URL('../../bin/shiphook.mjs', import.meta.url).pathname;
const ROOT = new URL('../..', import.meta.url).pathname;
// Were the setting taken, `npm start` would start PostgreSQL and Temporal: into a folder of the test's own.
const dataDir = mkdtempSync(path.join(tmpdir(), 'shiphook-refused-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** A command as a user types it, with one variable set; its exit code and what it printed. */
function run(file: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: ROOT, env: { ...process.env, SHIPHOOK_DATA_DIR: dataDir, NO_COLOR: '1', ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

describe('a refused setting', () => {
  it('stops npm start with one line naming the variable, what it got and what it takes, and exit 1', async () => {
    const { code, stderr } = await run('npm', ['start'], { SHIPHOOK_RETENTION_EVERY: '10s' });
    expect(code).toBe(1);
    expect(stderr).toBe('shiphook: SHIPHOOK_RETENTION_EVERY is "10s"; it takes a duration of at least 1m (a Temporal Schedule runs at most once a minute here)\n');
  });

  it('stops shiphook api, worker and migrate the same way, and never prints a secret it refuses', async () => {
    const cases: { command: string; env: Record<string, string>; line: string }[] = [
      { command: 'api', env: { SHIPHOOK_WORKER_ROLE: 'everything' }, line: 'shiphook: SHIPHOOK_WORKER_ROLE is "everything"; it takes one of all, deliveries, retries' },
      { command: 'worker', env: { SHIPHOOK_RETRY_DELAYS: '5s,soon' }, line: 'shiphook: SHIPHOOK_RETRY_DELAYS is "5s,soon"; it takes durations separated by commas (e.g. 500ms, 5s, 30m, 2h, 1d)' },
      { command: 'migrate', env: { PORT: 'eighty' }, line: 'shiphook: PORT is "eighty"; it takes a whole number, 0 or more' },
      { command: 'api', env: { SHIPHOOK_ADMIN_TOKEN: 'hunter2' }, line: 'shiphook: SHIPHOOK_ADMIN_TOKEN is 7 characters long; it takes at least 32 characters (e.g. `openssl rand -hex 32`)' },
    ];
    const results = await Promise.all(cases.map((c) => run(process.execPath, [CLI, c.command], c.env)));
    results.forEach(({ code, stdout, stderr }, i) => {
      expect({ code, stdout, stderr }).toEqual({ code: 1, stdout: '', stderr: `${cases[i]!.line}\n` });
    });
  });
});
