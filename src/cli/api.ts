import cluster from 'node:cluster';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config';
import { log } from '../log';
import { reportReady, stopWithLauncher } from './parent';
import { requireServices } from './require-env';

/**
 * `shiphook api`: the HTTP API. With SHIPHOOK_API_PROCESSES > 1 this process only
 * supervises that many API processes sharing the port (Node cluster), so one
 * container uses all of its cores; each is as stateless as a single one.
 */
export async function runApi(baseConfig: Config): Promise<void> {
  const config = requireServices(baseConfig);
  if (cluster.isPrimary) stopWithLauncher();
  if (config.apiProcesses > 1 && cluster.isPrimary) return supervise(config.apiProcesses);
  // Before the app is built; each API process its own SDK (a supervising primary serves nothing to trace).
  const tracing = config.tracing ? await (await import('../telemetry/sdk')).startTracing('shiphook-api') : undefined;

  // Loaded here, not at the top: a supervising primary needs none of it.
  const [{ createApp }, { answerParserErrors }, { startPrincipalCache }, { createDb }, { lazyTemporal }] = await Promise.all([
    import('../api/app'),
    import('../api/client-error'),
    import('../api/principal-cache'),
    import('../db/database'),
    import('../engine/client'),
  ]);
  const db = createDb(config.databaseUrl);
  const temporal = lazyTemporal(config);
  const principals = startPrincipalCache(config.databaseUrl);
  const app = createApp({ config, db, temporal, principals });
  const server = app.listen(config.port, config.host);
  answerParserErrors(server);
  await once(server, 'listening');
  if (cluster.isPrimary) {
    const { port } = server.address() as AddressInfo; // PORT=0: the one the system picked
    log.info('api listening', { url: `http://${config.host}:${port}/v2` });
    reportReady({ httpPort: port });
  }
  const stop = () => {
    server.close(() => void Promise.all([db.destroy(), temporal.close(), principals.close(), tracing?.shutdown()]).then(() => process.exit(0)));
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

/** Forks the API processes, replaces one that dies, and stops them all on SIGTERM/SIGINT. */
async function supervise(processes: number): Promise<void> {
  let stopping = false;
  // A scrape of /metrics lands on one api process; it asks this one for the sum over all.
  (await import('../metrics/exposition')).aggregateClusterMetrics();
  for (let i = 0; i < processes; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    log.warn('api process exited; starting another', { pid: worker.process.pid, code, signal });
    cluster.fork();
  });
  const listening = new Set<number>();
  cluster.on('listening', (worker, address) => {
    listening.add(worker.id);
    if (listening.size === processes) {
      log.info('api listening', { url: `http://${address.address}:${address.port}/v2`, processes });
      reportReady({ httpPort: address.port });
    }
  });
  const stop = () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    cluster.on('exit', () => {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
    });
    setTimeout(() => process.exit(0), 6000).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
