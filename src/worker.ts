import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { Config } from './config';
import type { Db } from './db/database';
import { startSweeper } from './delivery/dispatch';
import { lazyTemporal } from './temporal/client';

const WORKFLOWS = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export const SWEEP_INTERVAL_MS = 2000;
/** An event younger than this is still being started by its publisher. */
export const SWEEP_GRACE_MS = 3000;

/**
 * The Temporal worker: delivery workflows, the activities that do the HTTP and
 * SQL, and the outbox sweeper. `run()` resolves after SIGINT/SIGTERM once
 * in-flight tasks are done.
 */
export async function createWorker(config: Config, db: Db) {
  if (!config.temporalAddress) throw new Error('TEMPORAL_ADDRESS is not set');
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const temporal = lazyTemporal(config);
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    workflowsPath: WORKFLOWS,
    activities: createActivities({ config, db, temporal }),
  });
  return {
    worker,
    async run() {
      const stopSweeper = startSweeper(temporal, config, db, { intervalMs: SWEEP_INTERVAL_MS, graceMs: SWEEP_GRACE_MS });
      try {
        await worker.run();
      } finally {
        stopSweeper();
        await temporal.close();
        await connection.close();
      }
    },
  };
}
