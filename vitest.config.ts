import { configDefaults, defineConfig } from 'vitest/config';
import FuzzLastSequencer from './test/support/sequencer.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // `npm run test:cluster` (vitest.cluster.config.ts): minutes of a whole topology, not the suite's.
    exclude: [...configDefaults.exclude, 'test/cluster/**'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Three files at a time on two cores: many of them mostly wait (a fault's outage, a retry's timer).
    maxWorkers: 3,
    reporters: ['default', './test/support/summary-reporter.ts'],
    sequence: { sequencer: FuzzLastSequencer },
  },
});
