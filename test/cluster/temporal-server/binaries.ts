import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { stderrTail } from '../../../src/launcher/child';
import { LaunchError } from '../../../src/launcher/launch-error';
import { onPath } from '../../../src/launcher/on-path';
import { TOOLS_DIR } from '../../../src/launcher/python-tool';

/**
 * The Temporal server (not the dev server) and its schema tool, pinned. v1.32.0 is the
 * newest whose go.mod asks for no newer Go than the project's machines have (1.26.8); a
 * newer pin would make `go install` want a toolchain download, which is not allowed.
 * docker-compose.yml runs the same version (temporalio/server, temporalio/admin-tools).
 */
export const TEMPORAL_SERVER_VERSION = '1.32.0';

const MODULE = 'go.temporal.io/server';
/** What `go install` names them (the last element of the package path) → what the images name them. */
const BUILT = { server: { from: 'server', to: 'temporal-server' }, sqlTool: { from: 'sql', to: 'temporal-sql-tool' } } as const;

export interface TemporalServerBinaries {
  server: string;
  /** `temporal-sql-tool`: creates the databases and applies the versioned schema. */
  sqlTool: string;
}

export interface TemporalServerBinariesOptions {
  /** TEMPORAL_SERVER_PATH and TEMPORAL_SQL_TOOL_PATH are read from it, and `go` is looked for on its PATH. */
  env?: NodeJS.ProcessEnv;
  /** The project's tool cache (tests move it). */
  toolsDir?: string;
  /** Where a build says what it is doing (default: stderr), and how often it says it is still at it (tests shrink it). */
  progress?: BuildProgress;
}

export interface BuildProgress {
  say(line: string): void;
  everyMs: number;
}

/**
 * A build from an empty Go cache, as measured on a fresh 2-core machine (docs/operations.md,
 * "The real Temporal server"): what the build announces before it starts, so that a first
 * `npm run test:cluster` says how long it will be busy before its first test.
 */
const COLD_BUILD_MINUTES = 17;

const STDERR_PROGRESS: BuildProgress = { say: (line) => process.stderr.write(`${line}\n`), everyMs: 30_000 };

const HELP = `The cluster test runs a real Temporal server (v${TEMPORAL_SERVER_VERSION}), built once from the Go module proxy. Either:
  - install Go ${'>='} 1.26.8 (https://go.dev/dl/) and run again: the server is built into the project's tool cache (once; about ${COLD_BUILD_MINUTES} minutes on 2 cores), or
  - set TEMPORAL_SERVER_PATH to a temporal-server binary of v${TEMPORAL_SERVER_VERSION} (and TEMPORAL_SQL_TOOL_PATH to its temporal-sql-tool, unless it lies beside it).`;

/** Where the built binaries are kept (whether or not they are there yet). */
export function temporalServerCacheDir(toolsDir = TOOLS_DIR): string {
  return path.join(toolsDir, `temporal-server-${TEMPORAL_SERVER_VERSION}`);
}

/**
 * The server and schema tool: TEMPORAL_SERVER_PATH (with TEMPORAL_SQL_TOOL_PATH, or the
 * tool beside the server), then the project's tool cache, which is built now with Go if it
 * is not there yet (saying so, then how long it has been at it). Two processes building at
 * once each build into their own folder and rename it into place: neither sees half a build.
 */
export async function temporalServerBinaries(opts: TemporalServerBinariesOptions = {}): Promise<TemporalServerBinaries> {
  const env = opts.env ?? process.env;
  if (env.TEMPORAL_SERVER_PATH) {
    const given = explicitBinaries(env.TEMPORAL_SERVER_PATH, env.TEMPORAL_SQL_TOOL_PATH);
    await checkVersion(given.server, 'TEMPORAL_SERVER_PATH');
    return given;
  }
  const dir = temporalServerCacheDir(opts.toolsDir);
  const cached = cachedBinaries(dir);
  if (cached) return cached;
  const go = onPath('go', env);
  if (!go) throw new LaunchError(`Go is needed to build the Temporal server, and \`go\` is not on PATH.\n${HELP}`);
  await build(go, dir, env, opts.progress ?? STDERR_PROGRESS);
  const built = cachedBinaries(dir);
  if (!built) throw new LaunchError(`go install left no ${BUILT.server.from} and ${BUILT.sqlTool.from} in ${dir}.\n${HELP}`);
  return built;
}

function cachedBinaries(dir: string): TemporalServerBinaries | undefined {
  const server = path.join(dir, 'bin', BUILT.server.to);
  const sqlTool = path.join(dir, 'bin', BUILT.sqlTool.to);
  return existsSync(server) && existsSync(sqlTool) ? { server, sqlTool } : undefined;
}

function explicitBinaries(server: string, sqlToolPath: string | undefined): TemporalServerBinaries {
  if (!existsSync(server)) throw new LaunchError(`TEMPORAL_SERVER_PATH is ${server}, and there is no file there.\n${HELP}`);
  if (sqlToolPath) {
    if (!existsSync(sqlToolPath)) throw new LaunchError(`TEMPORAL_SQL_TOOL_PATH is ${sqlToolPath}, and there is no file there.\n${HELP}`);
    return { server, sqlTool: sqlToolPath };
  }
  const beside = [BUILT.sqlTool.to, BUILT.sqlTool.from].map((name) => path.join(path.dirname(server), name)).find((p) => existsSync(p));
  if (!beside) throw new LaunchError(`there is no ${BUILT.sqlTool.to} (or ${BUILT.sqlTool.from}) beside TEMPORAL_SERVER_PATH (${server}): set TEMPORAL_SQL_TOOL_PATH to it.\n${HELP}`);
  return { server, sqlTool: beside };
}

/**
 * A binary given by path is the pinned version: the schema the tool applies and the
 * dynamic config keys compose and the cluster test share are that version's
 * (`temporal-server --version` prints `temporal version 1.32.0`).
 */
async function checkVersion(server: string, variable: string): Promise<void> {
  const said = await promisify(execFile)(server, ['--version'], { timeout: 30_000 }).then(
    (r) => r.stdout.trim(),
    (err: Error) => `(${err.message.split('\n')[0]})`,
  );
  const version = /version v?(\d+\.\d+\.\d+)/.exec(said)?.[1];
  if (version !== TEMPORAL_SERVER_VERSION) {
    throw new LaunchError(`${variable} is ${server}, which is ${version ? `v${version}` : `not a Temporal server we can read the version of: ${said || 'it printed nothing'}`}; shiphook pins v${TEMPORAL_SERVER_VERSION}.\n${HELP}`);
  }
}

/**
 * `go install` of both commands into a folder of its own, renamed into `dir` once complete;
 * it says what it is doing and how long that takes before it starts, then the time elapsed
 * every `progress.everyMs` while Go builds, then the time it took.
 */
async function build(go: string, dir: string, env: NodeJS.ProcessEnv, progress: BuildProgress): Promise<void> {
  // Its own folder even beside another build of this process.
  const staging = `${dir}.partial-${process.pid}-${randomUUID().slice(0, 8)}`;
  await fs.mkdir(path.join(staging, 'bin'), { recursive: true });
  progress.say(`shiphook: building the Temporal server v${TEMPORAL_SERVER_VERSION} from Go sources once (${go} install, from the Go module proxy), into ${shown(dir)}; this takes about ${COLD_BUILD_MINUTES} minutes on 2 cores (less when Go's build cache is warm)…`);
  const started = Date.now();
  const ticker = setInterval(() => progress.say(`shiphook: still building the Temporal server: ${elapsed(started)} so far…`), progress.everyMs);
  try {
    const packages = [`${MODULE}/cmd/server@v${TEMPORAL_SERVER_VERSION}`, `${MODULE}/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`];
    // GOTOOLCHAIN=local: the installed Go builds it or says why not; it never fetches another Go.
    await run(go, ['install', ...packages], { ...env, GOBIN: path.join(staging, 'bin'), GOTOOLCHAIN: 'local' });
    for (const { from, to } of Object.values(BUILT)) await fs.rename(path.join(staging, 'bin', from), path.join(staging, 'bin', to));
    await fs.rename(staging, dir).catch(async (err: NodeJS.ErrnoException) => {
      // Another process finished first: its build is as good as ours.
      if (!cachedBinaries(dir)) throw err;
    });
    progress.say(`shiphook: built the Temporal server in ${elapsed(started)}`);
  } finally {
    clearInterval(ticker);
    await fs.rm(staging, { recursive: true, force: true });
  }
}

/** A folder as the reader finds it: under the working folder, relative to it. */
function shown(dir: string): string {
  const relative = path.relative(process.cwd(), dir);
  return relative && !relative.startsWith('..') ? relative : dir;
}

/** The time since `started`, as a person reads it: `42 s`, `3 min 05 s`. */
function elapsed(started: number): string {
  const s = Math.round((Date.now() - started) / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    const stderr = stderrTail(child, 4000);
    child.once('error', (err) => reject(new LaunchError(`could not run ${command}: ${err.message}\n${HELP}`)));
    child.once('exit', (code) => {
      if (code === 0) return resolve();
      const why = stderr.text().trim().split('\n').slice(-4).join('\n');
      reject(new LaunchError(`building the Temporal server failed (go install exited ${code}):\n${why}\n${HELP}`));
    });
  });
}
