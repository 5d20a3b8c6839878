import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startSystem } from '../../src/launcher/system';
import { TEST_ENV } from './test-config';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    temporalAddress: string;
  }
}

/**
 * Real services for the whole suite, through the same launcher as `shiphook dev`
 * and the bench: the env's DATABASE_URL / TEMPORAL_ADDRESS, or embedded PostgreSQL
 * and a Temporal dev server; migrations; one `shiphook worker` process that serves
 * every test file. Each test file runs its own API in-process (test/support/system.ts).
 */
export default async function setup(project: TestProject) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'shiphook-test-'));
  const system = await startSystem({
    dataDir,
    databaseUrl: process.env.DATABASE_URL,
    temporalAddress: process.env.TEMPORAL_ADDRESS,
    temporalCliPath: process.env.TEMPORAL_CLI_PATH,
    persistent: false,
    ui: false,
    env: TEST_ENV,
    workers: [{ label: 'worker', role: 'all' }],
    output: ['ignore', 'inherit'],
    // A worker that dies fails the tests that need it; say why at once.
    onChildDied: (reason) => process.stderr.write(`\n[global setup] ${reason}\n`),
  }).catch((err) => {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  });
  project.provide('databaseUrl', system.databaseUrl);
  project.provide('temporalAddress', system.temporalAddress);

  return async () => {
    await system.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
}
