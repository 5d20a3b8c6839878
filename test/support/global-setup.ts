import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startInfrastructure } from '../../src/launcher/infrastructure';
import { shiphookProcessEnv } from '../../src/launcher/process-env';
import { stopChild } from '../../src/launcher/temporal';
import { findLeaks, logFile } from './log-capture';
import { TEST_ENV } from './test-config';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    temporalAddress: string;
    /** The suite's worker's HTTP listener (/healthz, /readyz, /metrics). */
    workerHttpPort: number;
    /** Where every process of the suite writes its log lines (scanned for secrets at the end). */
    logDir: string;
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
  const logDir = path.join(dataDir, 'logs');
  mkdirSync(logDir);
  // At debug level, into a file: the richest logs the suite makes, all scanned for secrets at the end.
  const out = openSync(logFile(logDir, 'worker'), 'a');
  const worker: ChildProcess = spawn(process.execPath, [CLI, 'worker'], { env: { ...env, LOG_LEVEL: 'debug' }, stdio: ['ignore', out, out, 'ipc'] });
  const workerHttpPort = await new Promise<number>((resolve, reject) => {
    worker.on('message', (m: { ready?: boolean; httpPort?: number }) => m?.ready && resolve(m.httpPort!));
    worker.once('exit', (code) => reject(new Error(`the suite's worker exited (${code}) before it was ready; see ${logFile(logDir, 'worker')}`)));
  }).catch(async (err) => {
    await infra.stop();
    throw err;
  });
  project.provide('databaseUrl', infra.databaseUrl);
  project.provide('temporalAddress', infra.temporalAddress);
  project.provide('workerHttpPort', workerHttpPort);
  project.provide('logDir', logDir);

  return async () => {
    await stopChild(worker);
    // After the last test: no key, secret or URL password in any log line of the suite.
    const leaks = findLeaks(logDir, await secretsInUse(infra.databaseUrl));
    await infra.stop();
    if (leaks.length) {
      process.exitCode = 1; // vitest only reports an error thrown here; this fails the run
      throw new Error(`secrets in the suite's logs (kept in ${logDir}):\n` + leaks.slice(0, 20).map((l) => `  ${l.file}:${l.line}: ${l.what}`).join('\n'));
    }
    if (process.env.SHIPHOOK_KEEP_TEST_LOGS) process.stdout.write(`\nThe suite's logs: ${logDir}\n`);
    else rmSync(dataDir, { recursive: true, force: true });
  };
}

/** The API keys, webhook secrets and URL passwords the suite stored in the shared database. */
async function secretsInUse(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const keys = await client.query<{ key: string }>('select key from api_keys');
    const hooks = await client.query<{ url: string; webhook_secret: string | null }>('select url, webhook_secret from webhooks');
    return [
      ...keys.rows.map((r) => r.key),
      ...hooks.rows.flatMap((r) => [r.webhook_secret ?? '', URL.canParse(r.url) ? decodeURIComponent(new URL(r.url).password) : '']),
    ];
  } finally {
    await client.end();
  }
}
