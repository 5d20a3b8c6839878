import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { Config } from './config';
import type { Db } from './db/database';
import { startDispatcher } from './delivery/dispatcher';

const WORKFLOWS = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/** The dispatcher's pass without a notification (a safety net; notifications drive it). */
export const DISPATCH_INTERVAL_MS = 2000;

/**
 * The Temporal worker: delivery workflows, the activities that do the HTTP and
 * SQL, and the outbox dispatcher that starts the workflows of published events.
 * One NativeConnection serves all three, which is what lets the dispatcher's
 * starts be eager. `run()` resolves after SIGINT/SIGTERM once in-flight tasks are done.
 */
export async function createWorker(config: Config, db: Db) {
  if (!config.temporalAddress || !config.databaseUrl) throw new Error('TEMPORAL_ADDRESS and DATABASE_URL must be set');
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const client = new Client({ connection, namespace: config.temporalNamespace });
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    workflowsPath: WORKFLOWS,
    activities: createActivities({ config, db, temporal: async () => client }),
    // An eager start is only taken while a workflow task slot is free.
    maxConcurrentWorkflowTaskExecutions: config.worker.workflowTaskSlots,
    // Bounds memory: a delivery that waits on a retry timer leaves the cache and is
    // replayed from its (short) history when the timer fires.
    maxCachedWorkflows: config.worker.cachedWorkflows,
  });
  return {
    worker,
    async run() {
      const dispatcher = startDispatcher({ db, databaseUrl: config.databaseUrl!, client, config, intervalMs: DISPATCH_INTERVAL_MS });
      try {
        await worker.run();
      } finally {
        await dispatcher.stop();
        await connection.close();
      }
    },
  };
}
