import type { Config } from '../config';
import { createDb } from '../db/database';
import { log } from '../log';
import { registerEngineMetrics } from '../metrics/engine';
import { startProcessMetrics } from '../metrics/exposition';
import { installTemporalRuntime } from '../temporal/runtime';
import { createWorker } from '../worker';
import { startWorkerHttp } from '../worker-http';
import { requireServices } from './require-env';

export async function runWorker(baseConfig: Config): Promise<void> {
  const config = requireServices(baseConfig);
  const temporalMetricsUrl = await installTemporalRuntime(config);
  const db = createDb(config.databaseUrl);
  startProcessMetrics();
  registerEngineMetrics(db);
  const worker = await createWorker(config, db);
  const http = await startWorkerHttp(config, { db, temporal: async () => worker.client, temporalMetricsUrl });
  log.info('worker running', { taskQueue: config.taskQueue, namespace: config.temporalNamespace, role: config.worker.role, http: `http://${config.worker.httpHost}:${http.port}` });
  // `shiphook dev` and the tests wait for this before they go on; the port may have been 0 (any free).
  process.send?.({ ready: true, httpPort: http.port });
  await worker.run();
  await http.close();
  await db.destroy();
}
