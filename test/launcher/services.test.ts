import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/launcher/postgres';
import { startDevTemporal } from '../../src/launcher/temporal';

const root = mkdtempSync(path.join(tmpdir(), 'shiphook-services-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** What `died` holds once the exit has been handled: the reason, or 'pending'. */
const settled = (died: Promise<string>) => Promise.race([died, new Promise<string>((r) => setImmediate(() => r('pending')))]);

it('the Temporal dev server: an exit nobody asked for is reported with its cause; stop() is not one', async () => {
  const killed = await startDevTemporal({ cliPath: process.env.TEMPORAL_CLI_PATH, ui: false });
  process.kill(killed.pid!, 'SIGKILL');
  expect(await killed.died).toMatch(/^the Temporal dev server exited \(SIGKILL\): /);
  await killed.stop();

  const stopped = await startDevTemporal({ cliPath: process.env.TEMPORAL_CLI_PATH, ui: false });
  await stopped.stop(); // resolves after the exit was handled
  expect(await settled(stopped.died)).toBe('pending');
}, 60_000);

it("the Temporal dev server's Go collector: GOGC=400 within GOMEMLIMIT=256MiB, unless the environment sets them, and a mutable-state cache of 1,024 runs", async () => {
  const server = await startDevTemporal({ cliPath: process.env.TEMPORAL_CLI_PATH, ui: false });
  const vars = (await readFile(`/proc/${server.pid}/environ`, 'utf8')).split('\0');
  const args = (await readFile(`/proc/${server.pid}/cmdline`, 'utf8')).split('\0');
  await server.stop();
  expect(vars).toContain(`GOGC=${process.env.GOGC ?? '400'}`);
  expect(vars).toContain(`GOMEMLIMIT=${process.env.GOMEMLIMIT ?? '256MiB'}`);
  expect(args).toContain('history.hostLevelCacheMaxSize=1024');
}, 60_000);

it('PostgreSQL: an exit nobody asked for is reported with its last words; stop() is not one', async () => {
  // Shut down from outside (an operator's `pg_ctl stop`): its last words are the ones it wrote on the way out.
  const killed = await startEmbeddedPostgres(path.join(root, 'killed'), { persistent: false });
  process.kill(await postmasterPid(killed.dataDir), 'SIGTERM');
  expect(await killed.died).toBe('PostgreSQL exited (0): database system is shut down');
  await killed.stop();

  // Killed: it says nothing on the way out, and its start-up lines are not passed off as last words.
  const crashed = await startEmbeddedPostgres(path.join(root, 'crashed'), { persistent: false });
  process.kill(await postmasterPid(crashed.dataDir), 'SIGKILL');
  expect(await crashed.died).toBe('PostgreSQL exited (SIGKILL): no output');
  await crashed.stop();

  const stopped = await startEmbeddedPostgres(path.join(root, 'stopped'), { persistent: false });
  await stopped.stop();
  expect(await settled(stopped.died)).toBe('pending');
}, 120_000);

/** The first line of postmaster.pid is the server's pid. */
async function postmasterPid(dataDir: string): Promise<number> {
  return Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
}
