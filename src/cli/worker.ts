import type { Config } from '../config';
import { createDb } from '../db/database';
import { log } from '../log';
import { registerEngineMetrics } from '../metrics/engine';
import { startProcessMetrics } from '../metrics/exposition';
import { installTemporalRuntime } from '../engine/runtime';
import { createWorker } from '../engine/worker';
import { startWorkerHttp } from '../engine/worker-http';
import { reportReady, stopWithLauncher } from './parent';
import { requireServices } from './require-env';

export async function runWorker(baseConfig: Config): Promise<void> {
  const config = requireServices(baseConfig);
  stopWithLauncher();
  // Before the worker is created: its interceptors and workflow bundle depend on it.
  const tracing = config.tracing ? await (await import('../telemetry/sdk')).startTracing(config.worker.role === 'all' ? 'shiphook-worker' : `shiphook-worker-${config.worker.role}`) : undefined;
  const temporalMetricsUrl = await installTemporalRuntime(config);
  const db = createDb(config.databaseUrl);
  startProcessMetrics();
  registerEngineMetrics(db);
  const worker = await createWorker(config, db);
  const http = await startWorkerHttp(config, { db, temporal: async () => worker.client, temporalMetricsUrl });
  log.info('worker running', { task_queue: config.taskQueue, namespace: config.temporalNamespace, role: config.worker.role, http: `http://${config.worker.httpHost}:${http.port}` });
  // The launcher waits for this before it goes on; the port may have been 0 (any free).
  reportReady({ httpPort: http.port });
  await worker.run();
  await http.close();
  await db.destroy();
  await tracing?.shutdown(); // the spans still buffered
  // Everything is stopped, but the SDK's native runtime keeps the event loop alive.
  process.exit(0);
}
