import { defineConfig } from 'vitest/config';

/**
 * `npm run test:cluster`: the production topology on a real Temporal server under faults
 * (test/cluster/). It starts its own services (no global setup) and runs one file at a
 * time: each file's topology takes the machine.
 */
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.test.ts'],
    testTimeout: 420_000,
    hookTimeout: 240_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
