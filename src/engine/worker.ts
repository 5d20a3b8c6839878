import { Client } from '@temporalio/client';
import { normalizeGrpcEndpointAddress, splitProtoHostPort } from '@temporalio/common/lib/internal-non-workflow';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities/index';
import { type Config, retryTaskQueue } from '../config';
import type { Db } from '../db/database';
import { startDispatcher } from './outbox';
import { acceptsConnections } from '../net';
import { log } from '../log';
import { deliveryLogIds } from './activity-log-ids';
import { workflowBundle } from './bundle';
import { workflowSandboxOptions } from './sandbox';
import { healthSignals } from './starters';
import { spacedHealthSignals } from './health-signals';
import { clientTracing } from './tracing';
import { activityTracing } from './worker-tracing';
import { ensureRetentionSchedule } from './retention-schedule';
import { missingSearchAttributes, missingSearchAttributesMessage } from './search-attributes-check';
import { keepPayloadPartitionsAhead } from '../events/payload-partitions';
import { errorText } from '../errors/error-text';

/** The dispatcher's pass without a notification (a safety net; notifications drive it). */
const DISPATCH_INTERVAL_MS = 2000;
/** Backoff between attempts to (re)connect to Temporal or recreate a failed SDK Worker. */
const RESTART_DELAYS_MS = [1000, 2000, 5000, 10_000, 30_000];

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => { stopping = true; });

/** Calls `fn` until it succeeds, waiting longer after each failure (Temporal unreachable). */
async function retrying<T>(what: string, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (stopping) throw err;
      const delay = RESTART_DELAYS_MS[Math.min(attempt, RESTART_DELAYS_MS.length - 1)]!;
      log.warn(`${what} failed; trying again`, { in_ms: delay, error: errorText(err) });
      // In slices, so a SIGINT/SIGTERM meanwhile ends the wait promptly.
      for (const until = Date.now() + delay; Date.now() < until && !stopping; ) await new Promise((r) => setTimeout(r, 250));
      if (stopping) throw err;
    }
  }
}

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
  const address = config.temporalAddress;
  // The SDK's own parser (an invalid address fails here, at once, with the SDK's message).
  const { hostname, port } = splitProtoHostPort(normalizeGrpcEndpointAddress(address, 7233))!;
  const connection = await retrying('connecting to Temporal', async () => {
    // The SDK (1.24, with its core's logs forwarded as here) leaks four file descriptors per
    // failed connect: a worker waiting hours for Temporal would run out. Connect only once
    // something accepts connections there (a refused probe costs nothing).
    if (!(await acceptsConnections(port!, hostname))) throw new Error(`nothing accepts connections at ${address}`);
    return NativeConnection.connect({ address });
  });
  // A worker that starts workflows first checks that the namespace knows their search attributes.
  if (role !== 'retries') {
    const missing = await missingSearchAttributes(connection, config.temporalNamespace);
    if (missing?.length) {
      await connection.close();
      throw new Error(missingSearchAttributesMessage(missing, config.temporalNamespace));
    }
  }
  // Tracing (none when off): the dispatcher's starts and the health signals carry the trace, workflows hand it on, activities continue it.
  const traced = await activityTracing();
  const client = new Client({ connection, namespace: config.temporalNamespace, interceptors: await clientTracing() });
  const activities = createActivities({ config, db, health: spacedHealthSignals(healthSignals(client, config)) });
  const bundle = role !== 'retries' ? await workflowBundle(config.worker.workflowBundle, { traced: !!traced }) : undefined;
  const activityInterceptors = [deliveryLogIds, ...(traced ?? [])];
  const sandbox = workflowSandboxOptions(config.worker.workflowDiagnostics);
  // How to (re)create each SDK Worker: one fails for good after about a minute of
  // failed polls (a long Temporal outage), and this process then creates it again.
  const factories: (() => Promise<Worker>)[] = [];
  // Every role records attempts: the Payload partitions they go to exist before any runs.
  await retrying('creating the Payload partitions ahead', () => keepPayloadPartitionsAhead(db, config));
  if (role !== 'retries') {
    factories.push(() =>
      Worker.create({
        connection,
        namespace: config.temporalNamespace,
        taskQueue: config.taskQueue,
        workflowBundle: bundle,
        activities,
        // An eager start is only taken while a workflow task slot is free.
        maxConcurrentWorkflowTaskExecutions: config.worker.workflowTaskSlots,
        maxCachedWorkflows: config.worker.cachedWorkflows,
        // A first attempt is one local activity inside its event's task: as many as tasks
        // (the SDK's default of 100 held every event back behind an endpoint that hangs).
        maxConcurrentLocalActivityExecutions: config.worker.workflowTaskSlots,
        interceptors: { activity: activityInterceptors },
        // Not a public option of the SDK's types: see sandbox.ts.
        ...(sandbox as object),
      }),
    );
  }
  if (role !== 'deliveries') {
    factories.push(() =>
      Worker.create({
        connection,
        namespace: config.temporalNamespace,
        taskQueue: retryTaskQueue(config),
        activities: { retryDelivery: activities.retryDelivery },
        maxConcurrentActivityTaskExecutions: config.worker.retrySlots,
        interceptors: { activity: activityInterceptors },
      }),
    );
  }
  const workers = await Promise.all(factories.map((f) => retrying('creating the Temporal worker', f)));
  // The workers that run workflows keep the retention Schedule in line with their configuration.
  if (role !== 'retries') await retrying('creating the retention schedule', () => ensureRetentionSchedule(client, config));
  /** Runs a Worker until shutdown (SIGINT/SIGTERM); one that fails is replaced, never the process. */
  const keepRunning = async (first: Worker, create: () => Promise<Worker>) => {
    for (let worker = first; ; ) {
      try {
        return await worker.run();
      } catch (err) {
        if (stopping) return;
        log.error('Temporal worker failed; creating it again', { error: errorText(err, 300) });
        worker = await retrying('creating the Temporal worker', create);
      }
    }
  };
  return {
    /** For readiness checks (Temporal answers). */
    client,
    async run() {
      const dispatcher = role === 'retries' ? undefined : startDispatcher({ db, databaseUrl: config.databaseUrl!, client, config, intervalMs: DISPATCH_INTERVAL_MS });
      try {
        await Promise.all(workers.map((w, i) => keepRunning(w, factories[i]!)));
      } finally {
        await dispatcher?.stop();
        await connection.close();
      }
    },
  };
}
