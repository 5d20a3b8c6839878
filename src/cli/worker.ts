import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { Config } from '../config';
import { createDb } from '../db/database';
import { log } from '../log';
import { createWorker } from '../worker';
import { reportReady, stopWithLauncher } from './parent';
import { requireServices } from './require-env';

export async function runWorker(baseConfig: Config): Promise<void> {
  const config = requireServices(baseConfig);
  stopWithLauncher();
  // The SDK's own logs (bundler output, state changes) only from WARN up, unless debugging.
  Runtime.install({ logger: new DefaultLogger(config.logLevel === 'debug' ? 'DEBUG' : 'WARN') });
  const db = createDb(config.databaseUrl);
  const worker = await createWorker(config, db);
  log.info('worker running', { taskQueue: config.taskQueue, namespace: config.temporalNamespace });
  reportReady(); // the launcher waits for this before it says "ready"
  await worker.run();
  await db.destroy();
  // Everything is stopped, but the SDK's native runtime keeps the event loop alive.
  process.exit(0);
}
