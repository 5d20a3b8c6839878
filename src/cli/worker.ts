import type { Config } from '../config';
import { createDb } from '../db/database';
import { log } from '../log';
import { createWorker } from '../worker';
import { requireServices } from './require-env';

export async function runWorker(baseConfig: Config): Promise<void> {
  const config = requireServices(baseConfig);
  const db = createDb(config.databaseUrl);
  const worker = await createWorker(config, db);
  log.info('worker running', { taskQueue: config.taskQueue, namespace: config.temporalNamespace });
  await worker.run(); // returns after SIGINT/SIGTERM once in-flight tasks finish
  await db.destroy();
}
