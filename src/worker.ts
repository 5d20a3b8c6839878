import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { type Config, retryTaskQueue } from './config';
import type { Db } from './db/database';
import { startDispatcher } from './delivery/dispatcher';
import { deliveryLogIds } from './temporal/activity-log-ids';
import { workflowBundle } from './temporal/workflow-bundle';

/** The dispatcher's pass without a notification (a safety net; notifications drive it). */
const DISPATCH_INTERVAL_MS = 2000;

/**
 * A worker process, by role (config.worker.role):
 * - `deliveries`: delivery workflows, first attempts (local activities), the other
 *   activities, and the outbox dispatcher that starts the workflows of published events;
 * - `retries`: later attempts, from their own task queue, so they can run at a lower
 *   priority (or elsewhere) and an endpoint that is down never slows fresh events;
 * - `all`: both in one process.
 * One NativeConnection serves everything, which is what lets the dispatcher's starts
 * be eager. `run()` resolves after SIGINT/SIGTERM once in-flight tasks are done.
 */
export async function createWorker(config: Config, db: Db) {
  if (!config.temporalAddress || !config.databaseUrl) throw new Error('TEMPORAL_ADDRESS and DATABASE_URL must be set');
  const { role } = config.worker;
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const client = new Client({ connection, namespace: config.temporalNamespace });
  const activities = createActivities({ config, db, temporal: async () => client });
  const workers: Worker[] = [];
  if (role !== 'retries') {
    workers.push(
      await Worker.create({
        connection,
        namespace: config.temporalNamespace,
        taskQueue: config.taskQueue,
        workflowBundle: await workflowBundle(config.worker.workflowBundle),
        activities,
        // An eager start is only taken while a workflow task slot is free.
        maxConcurrentWorkflowTaskExecutions: config.worker.workflowTaskSlots,
        maxCachedWorkflows: config.worker.cachedWorkflows,
        interceptors: { activity: [deliveryLogIds] },
      }),
    );
  }
  if (role !== 'deliveries') {
    workers.push(
      await Worker.create({
        connection,
        namespace: config.temporalNamespace,
        taskQueue: retryTaskQueue(config),
        activities: { retryDelivery: activities.retryDelivery },
        interceptors: { activity: [deliveryLogIds] },
      }),
    );
  }
  return {
    /** For readiness checks (Temporal answers). */
    client,
    async run() {
      const dispatcher = role === 'retries' ? undefined : startDispatcher({ db, databaseUrl: config.databaseUrl!, client, config, intervalMs: DISPATCH_INTERVAL_MS });
      const runs = workers.map((w) => w.run());
      try {
        await Promise.all(runs);
      } catch (err) {
        // One failed for good: stop the other too, then report.
        for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
        await Promise.allSettled(runs);
        throw err;
      } finally {
        await dispatcher?.stop();
        await connection.close();
      }
    },
  };
}
