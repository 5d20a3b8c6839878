import { defineConfig } from 'vitest/config';
import FuzzLastSequencer from './test/support/sequencer';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default', './test/support/summary-reporter.ts'],
    sequence: { sequencer: FuzzLastSequencer },
  },
});
