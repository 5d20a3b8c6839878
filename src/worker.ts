import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { Config } from './config';
import type { Db } from './db/database';

const WORKFLOWS = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/** The Temporal worker: delivery workflows and the activities that do the HTTP. */
export async function createWorker(config: Config, db: Db): Promise<Worker> {
  if (!config.temporalAddress) throw new Error('TEMPORAL_ADDRESS is not set');
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  return Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    workflowsPath: WORKFLOWS,
    activities: createActivities({ config, db }),
  });
}
