import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startInfrastructure } from '../../src/launcher/infrastructure';
import { shiphookProcessEnv } from '../../src/launcher/process-env';
import { stopChild } from '../../src/launcher/temporal';
import { TEST_ENV } from './test-config';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    temporalAddress: string;
  }
}

const CLI = path.resolve('bin/shiphook.mjs');

/**
 * Real services for the whole suite, through the same launcher as `shiphook dev`:
 * the env's DATABASE_URL / TEMPORAL_ADDRESS, or embedded PostgreSQL and a Temporal
 * dev server. One `shiphook worker` child process serves every test file.
 */
export default async function setup(project: TestProject) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'shiphook-test-'));
  const infra = await startInfrastructure({
    dataDir,
    databaseUrl: process.env.DATABASE_URL,
    temporalAddress: process.env.TEMPORAL_ADDRESS,
    temporalCliPath: process.env.TEMPORAL_CLI_PATH,
    persistent: false,
    ui: false,
  });
  const env = { ...shiphookProcessEnv(), ...TEST_ENV, DATABASE_URL: infra.databaseUrl, TEMPORAL_ADDRESS: infra.temporalAddress };
  try {
    // Migrations run through the CLI, exactly as an operator runs them.
    execFileSync(process.execPath, [CLI, 'migrate'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  } catch (err) {
    await infra.stop();
    throw err;
  }
  const worker: ChildProcess = spawn(process.execPath, [CLI, 'worker'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  project.provide('databaseUrl', infra.databaseUrl);
  project.provide('temporalAddress', infra.temporalAddress);

  return async () => {
    await stopChild(worker);
    await infra.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
}
