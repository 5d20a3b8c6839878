import { defineConfig } from 'vitest/config';

/**
 * `npm run test:cluster`: the production topology on a real Temporal server under faults
 * (test/cluster/). Its global setup only makes sure the server's binaries are there; each
 * file starts its own services, one file at a time: each file's topology takes the machine.
 */
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.test.ts'],
    globalSetup: ['test/cluster/global-setup.ts'],
    testTimeout: 420_000,
    hookTimeout: 240_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
