import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { startShiphookChild } from '../../src/launcher/child';
import { freePort } from '../../src/launcher/ports';
import { NODE_FLAGS, shiphookProcessEnv } from '../../src/launcher/process-env';
import { TEST_ENV } from '../support/test-config';

// Node takes these flags only on the command line (not from NODE_OPTIONS; V8 aborts when
// they are set at run time), so the two ways shiphook starts its processes must each pass them.

it('the launcher starts api and workers with the node flags (V8 collecting on one thread, keeping compiled code)', async () => {
  expect(NODE_FLAGS).toEqual(expect.arrayContaining(['--single-threaded-gc', '--no-flush-bytecode', '--no-memory-reducer']));
  // Services nobody listens on: the process need not get far. Its command line is read
  // right after the spawn (which returns once it has exec'd), before the event loop
  // could reap it.
  const worker = startShiphookChild({
    command: 'worker',
    env: { ...shiphookProcessEnv(), ...TEST_ENV, DATABASE_URL: `postgres://nobody@127.0.0.1:${await freePort()}/none`, TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` },
    output: ['ignore', 'ignore'],
  });
  worker.ready.catch(() => undefined); // never ready: stopped below
  try {
    const argv = readFileSync(`/proc/${worker.process.pid}/cmdline`, 'utf8').split('\0');
    const script = argv.findIndex((a) => a.endsWith('bin/shiphook.mjs'));
    expect(argv.slice(1, script)).toEqual(expect.arrayContaining([...NODE_FLAGS]));
    expect(argv[script + 1]).toBe('worker');
  } finally {
    await worker.stop();
  }
}, 30_000);

it("the image's entrypoint passes the same node flags", () => {
  const entrypoint = readFileSync('Dockerfile', 'utf8').match(/^ENTRYPOINT (\[.*\])$/m)?.[1];
  expect(JSON.parse(entrypoint!)).toEqual(['node', ...NODE_FLAGS, 'bin/shiphook.mjs']);
});

it("the image's memory settings are the launchers'", () => {
  const line = readFileSync('Dockerfile', 'utf8').match(/^ENV MALLOC_ARENA_MAX=(\S+) NODE_OPTIONS="(.*)"$/m);
  const launched = shiphookProcessEnv({});
  expect({ MALLOC_ARENA_MAX: line?.[1], NODE_OPTIONS: line?.[2] }).toEqual({ MALLOC_ARENA_MAX: launched.MALLOC_ARENA_MAX, NODE_OPTIONS: launched.NODE_OPTIONS });
});
