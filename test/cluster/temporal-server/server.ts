import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { stderrTail, stopProcess, watchService, type WatchedService } from '../../../src/launcher/child';
import { LaunchError } from '../../../src/launcher/launch-error';
import { freePort } from '../../../src/launcher/ports';
import { startEmbeddedPostgres } from '../../../src/launcher/postgres';
import { findTemporalCli } from '../../../src/launcher/temporal';
import { clusterServing, ensureNamespace, registerSearchAttributes } from '../../../src/launcher/temporal-operator';
import { type TemporalServerBinaries, temporalServerBinaries } from './binaries';
import { DYNAMIC_CONFIG_FILE, type ServerPorts, temporalServerEnv } from './environment';
import { setupTemporalSchema } from './schema';

/**
 * A real Temporal server (not the dev server) for the cluster test: the pinned
 * `temporal-server` binary with PostgreSQL persistence for history and visibility, in a
 * PostgreSQL of its own (as compose's temporal-postgres), set up the way compose sets up
 * its server: `temporal-sql-tool` creates and migrates both databases, the server starts
 * from the configuration template it embeds, driven by the same environment variables the
 * temporalio/server image is given, and the `temporal` CLI creates the namespace and
 * registers the search attributes.
 *
 * All four services (frontend, history, matching, worker) run in one `temporal-server
 * start` process: one process to kill and start again. Every gRPC and membership port is a
 * free one on 127.0.0.1, kept across restarts.
 */

export interface TemporalServerOptions {
  /** Its PostgreSQL's data goes under `<dataDir>/temporal-postgres`. */
  dataDir: string;
  /** Keep the databases when stopped (default: removed on stop, as tests want). */
  persistent?: boolean;
  /** The `temporal` CLI (TEMPORAL_CLI_PATH); found as the dev launcher finds it otherwise. */
  cliPath?: string;
  /** The server's binaries' environment: TEMPORAL_SERVER_PATH, TEMPORAL_SQL_TOOL_PATH, PATH for `go` (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** The `default` namespace's retention (compose: x-event-retention); the CLI's default when the namespace is created without it. */
  namespaceRetentionMs?: number;
  /** Serve the server's Prometheus metrics on this port of 127.0.0.1. */
  metricsPort?: number;
  /** Append the server's log (warnings and errors) to this file too. */
  logFile?: string;
}

export interface TemporalServer {
  /** The frontend, host:port. */
  address: string;
  /** The current server process (a new one after `start()`). */
  readonly pid: number | undefined;
  /** Resolves with the reason if the server (or its PostgreSQL) exits without `stop()` or `kill()`; otherwise never. */
  died: Promise<string>;
  /** Stops the server, then its PostgreSQL (its data removed unless `persistent`). */
  stop(): Promise<void>;
  /** Kills the server's process (SIGKILL by default) and waits until it is gone; its PostgreSQL stays up. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the server again on the same database and ports, and waits until its frontend serves. */
  start(): Promise<void>;
}

const READY_TIMEOUT_MS = 120_000;

export async function startTemporalServer(opts: TemporalServerOptions): Promise<TemporalServer> {
  const binaries = await temporalServerBinaries({ env: opts.env });
  const cli = findTemporalCli(opts.cliPath);
  const postgres = await startEmbeddedPostgres(path.join(opts.dataDir, 'temporal-postgres'), { persistent: opts.persistent ?? false });
  try {
    await setupTemporalSchema(binaries.sqlTool, postgres);
    const ports = await distinctFreePorts();
    const env = temporalServerEnv(postgres, ports, opts.metricsPort);
    const address = `127.0.0.1:${ports.frontend}`;
    const server = new ServerProcess(binaries, env, address, cli, opts.logFile);
    await server.start();
    try {
      await ensureNamespace(cli, address, opts.namespaceRetentionMs);
      await registerSearchAttributes(cli, address);
    } catch (err) {
      await server.stop();
      throw err;
    }
    return {
      address,
      get pid() { return server.pid; },
      died: Promise.race([server.died, postgres.died]),
      stop: async () => {
        await server.stop();
        await postgres.stop();
      },
      kill: (signal) => server.kill(signal),
      start: () => server.start(),
    };
  } catch (err) {
    await postgres.stop();
    throw err;
  }
}

/** Nine free ports, no two alike. */
async function distinctFreePorts(): Promise<ServerPorts> {
  const taken = new Set<number>();
  const next = async (): Promise<number> => {
    for (;;) {
      const port = await freePort();
      if (!taken.has(port)) return taken.add(port), port;
    }
  };
  return {
    frontend: await next(), frontendHttp: await next(), frontendMembership: await next(),
    history: await next(), historyMembership: await next(),
    matching: await next(), matchingMembership: await next(),
    worker: await next(), workerMembership: await next(),
  };
}

/** The `temporal-server start` process, started again by `start()` after a `kill()`; one `died` for all its lives. */
class ServerProcess {
  private current?: { child: ChildProcess; watched: WatchedService };
  private reportDeath!: (reason: string) => void;
  readonly died = new Promise<string>((resolve) => { this.reportDeath = resolve; });

  constructor(
    private readonly binaries: TemporalServerBinaries,
    private readonly env: NodeJS.ProcessEnv,
    private readonly address: string,
    private readonly cli: string,
    private readonly logFile?: string,
  ) {}

  get pid(): number | undefined {
    return this.current?.child.pid;
  }

  async start(): Promise<void> {
    if (this.current) throw new Error('the Temporal server is running already');
    const child = spawn(this.binaries.server, ['start'], { cwd: path.dirname(DYNAMIC_CONFIG_FILE), env: this.env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    if (this.logFile) child.stderr?.pipe(createWriteStream(this.logFile, { flags: 'a' }));
    const stderr = stderrTail(child, 4000);
    const lastWords = () => stderr.text().trim().split('\n').slice(-2).join(' ');
    const exited = new Promise<never>((_, reject) => {
      child.once('error', (err) => reject(new LaunchError(`could not run the Temporal server at ${this.binaries.server}: ${err.message}`)));
      child.once('exit', (code, signal) => reject(new LaunchError(`the Temporal server exited (${signal ?? code}) while starting: ${lastWords() || 'no output'}`)));
    });
    exited.catch(() => undefined);
    try {
      await Promise.race([this.untilServing(), exited]);
    } catch (err) {
      await stopProcess(child);
      throw err;
    }
    stderr.clear(); // from now on, what it says before an exit (not its start-up lines)
    const watched = watchService(child, 'the Temporal server', lastWords);
    void watched.died.then((reason) => {
      if (this.current?.child === child) this.current = undefined;
      this.reportDeath(reason);
    });
    this.current = { child, watched };
  }

  /** Not a death: the caller asked for it (a fault test), and may `start()` it again. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const current = this.current;
    if (!current) return;
    this.current = undefined;
    await current.watched.stop({ signal, graceMs: 8000 });
  }

  async stop(): Promise<void> {
    await this.kill('SIGTERM');
  }

  private async untilServing(): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!(await clusterServing(this.cli, this.address))) {
      if (Date.now() > deadline) throw new LaunchError(`the Temporal server's frontend (${this.address}) did not serve within ${READY_TIMEOUT_MS / 1000} s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
