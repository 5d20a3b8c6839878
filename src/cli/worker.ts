import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { Config } from '../config';
import { createDb } from '../db/database';
import { log } from '../log';
import { createWorker } from '../worker';
import { requireServices } from './require-env';

export async function runWorker(baseConfig: Config): Promise<void> {
  const config = requireServices(baseConfig);
  // The SDK's own logs (bundler output, state changes) only from WARN up, unless debugging.
  Runtime.install({ logger: new DefaultLogger(config.logLevel === 'debug' ? 'DEBUG' : 'WARN') });
  const db = createDb(config.databaseUrl);
  const worker = await createWorker(config, db);
  log.info('worker running', { taskQueue: config.taskQueue, namespace: config.temporalNamespace });
  process.send?.({ ready: true }); // `shiphook dev` waits for this before it says "ready"
  await worker.run();
  await db.destroy();
}
