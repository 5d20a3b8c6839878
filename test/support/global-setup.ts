import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { setNice } from '../../src/launcher/child';
import { startOtlpReceiver } from '../../src/launcher/otlp-receiver';
import { provisionedTool, TOOLS_DIR } from '../../src/launcher/python-tool';
import { startSystem } from '../../src/launcher/system';
import { findLeaks, logFile, spanFile } from './log-capture';
import { PYTHON_TOOLS } from './python-tools';
import { otlpEnv, TEST_ENV } from './test-config';
import { workflowBundleFile } from './workflow-bundle';

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

/**
 * Real services for the whole suite, through the same launcher as `shiphook dev`
 * and the bench: the env's DATABASE_URL / TEMPORAL_ADDRESS, or embedded PostgreSQL
 * and a Temporal dev server; migrations; one `shiphook worker` process that serves
 * every test file. Each test file runs its own API in-process (test/support/system.ts).
 *
 * What a first run on a fresh machine must build or fetch starts at once, beside the
 * services: the workflow bundles (built once per content, shared with every test file's
 * workers: workflow-bundle.ts) and, in the background, the PyPI tools some files run later.
 */
export default async function setup(project: TestProject) {
  const fetching = (Object.keys(PYTHON_TOOLS) as (keyof typeof PYTHON_TOOLS)[]).filter((t) => !provisionedTool(PYTHON_TOOLS[t])).map(fetchInBackground);
  // The worker exports traces: it loads the traced bundle beside this one.
  const bundle = workflowBundleFile({ traced: true });
  bundle.catch(() => undefined); // awaited once the services are up
  const dataDir = mkdtempSync(path.join(tmpdir(), 'shiphook-test-'));
  const logDir = path.join(dataDir, 'logs');
  mkdirSync(path.join(logDir, 'spans'), { recursive: true });
  // At debug level, into a file: the richest logs the suite makes, all scanned for secrets at the end.
  const out = openSync(logFile(logDir, 'worker'), 'a');
  // The worker exports its spans (every delivery of the suite's tests) as well, also scanned.
  const spans = await startOtlpReceiver({ dumpTo: spanFile(logDir, 'worker'), keep: false });
  const system = await startSystem({
    dataDir,
    databaseUrl: process.env.DATABASE_URL,
    temporalAddress: process.env.TEMPORAL_ADDRESS,
    temporalCliPath: process.env.TEMPORAL_CLI_PATH,
    persistent: false,
    ui: false,
    env: TEST_ENV,
    output: [out, out],
    // A worker or service that dies fails the tests that need it; say why at once (a worker's log has the rest).
    onChildDied: (reason) => process.stderr.write(`\n[global setup] ${reason}${reason.startsWith('shiphook worker') ? `; see ${logFile(logDir, 'worker')}` : ''}\n`),
  }).catch(async (err) => {
    await spans.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  });
  const worker = await bundle
    .then((file) => system.startWorker({ label: 'worker', role: 'all', env: { LOG_LEVEL: 'debug', ...otlpEnv(spans.url), SHIPHOOK_WORKFLOW_BUNDLE: file } }))
    .catch(async (err) => {
      await system.stop();
      await spans.close();
      rmSync(dataDir, { recursive: true, force: true });
      throw err;
    });
  project.provide('databaseUrl', system.databaseUrl);
  project.provide('temporalAddress', system.temporalAddress);
  project.provide('workerHttpPort', (await worker.ready).httpPort as number);
  project.provide('logDir', logDir);

  return async () => {
    fetching.forEach(stopFetching); // a run of a few files may have needed neither tool
    await worker.stop(); // which sends its last spans
    await spans.close();
    // After the last test: no key, secret or URL password in any log line or span of the suite,
    // and no custom header value in any span (logs of Payloads may show them: they are the account's).
    const { secrets, headerValues } = await secretsInUse(system.databaseUrl);
    const leaks = [...findLeaks(logDir, secrets), ...findLeaks(path.join(logDir, 'spans'), [...secrets, ...headerValues]).map((l) => ({ ...l, file: `spans/${l.file}` }))];
    await system.stop();
    if (leaks.length) {
      process.exitCode = 1; // vitest only reports an error thrown here; this fails the run
      throw new Error(`secrets in the suite's logs or spans (kept in ${logDir}):\n` + leaks.slice(0, 20).map((l) => `  ${l.file}:${l.line}: ${l.what}`).join('\n'));
    }
    if (process.env.SHIPHOOK_KEEP_TEST_LOGS) process.stdout.write(`\nThe suite's logs: ${logDir}\n`);
    else rmSync(dataDir, { recursive: true, force: true });
  };
}

/** The API keys, webhook secrets and URL passwords the suite stored in the shared database, and its webhooks' custom header values. */
async function secretsInUse(databaseUrl: string): Promise<{ secrets: string[]; headerValues: string[] }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const keys = await client.query<{ key: string }>('select key from api_keys');
    const hooks = await client.query<{ url: string; webhook_secret: string | null; custom_headers: { value: string }[] }>('select url, webhook_secret, custom_headers from webhooks');
    return {
      secrets: [
        ...keys.rows.map((r) => r.key),
        ...hooks.rows.flatMap((r) => [r.webhook_secret ?? '', URL.canParse(r.url) ? decodeURIComponent(new URL(r.url).password) : '']),
      ],
      headerValues: hooks.rows.flatMap((r) => r.custom_headers.map((h) => h.value)),
    };
  } finally {
    await client.end();
  }
}

/**
 * Fetches a PyPI tool of the suite (provision-tools.ts) in a process group of its own, its one
 * progress line on this stderr; a test that needs the tool waits for it (python-tools.ts). At the
 * lowest priority: the first test files, the fault tests among them, run meanwhile.
 */
function fetchInBackground(tool: keyof typeof PYTHON_TOOLS): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('test/support/provision-tools.ts'), tool], { stdio: ['ignore', 'ignore', 'inherit'], detached: true });
  child.on('error', () => undefined);
  if (child.pid) setNice(child.pid, 19);
  return child;
}

/** Stops a fetch still running, its pip with it, and removes what it leaves: its half-installed copy (python-tool.ts: `<tool>.partial-<pid>`) and its marker. */
function stopFetching(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    return; // already gone
  }
  if (!existsSync(TOOLS_DIR)) return;
  for (const entry of readdirSync(TOOLS_DIR)) {
    if (entry.endsWith(`.partial-${child.pid}`) || entry.endsWith(`.fetching-${child.pid}`)) rmSync(path.join(TOOLS_DIR, entry), { recursive: true, force: true });
  }
}
