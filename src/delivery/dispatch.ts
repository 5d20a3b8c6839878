import type { Config } from '../config';
import type { Db } from '../db/database';
import type { EventRow } from '../db/tables/events';
import { log } from '../log';
import { maskUrl } from '../domain/webhook-url';
import type { TemporalClientSource } from '../temporal/client';
import { EventIdAttr, EventStatusAttr, EventTypeAttr, ModeAttr, UserIdAttr, WebhookUrlsAttr } from '../temporal/search-attributes';
import { deliveryWorkflowId } from '../temporal/task-queue';
import type { DeliverEventInput } from '../../workflows/deliver-event';

const START_TIMEOUT_MS = 5000;

/**
 * Starts the delivery workflow of a committed event and marks it dispatched.
 * Starting is idempotent: a running workflow of that id is reused, and a new run
 * after a finished one only delivers what the database still has pending (never
 * a URL already acknowledged). A replay replaces a running run at once.
 */
export async function startDelivery(temporal: TemporalClientSource, config: Config, db: Db, event: EventRow, opts: { replay?: boolean } = {}): Promise<void> {
  const client = await temporal();
  const targets = await db.selectFrom('event_deliveries').select(['webhook_id', 'url']).where('event_id', '=', event.id).where('state', '=', 'pending').orderBy('webhook_id').execute();
  const input: DeliverEventInput = {
    eventId: event.id,
    targets: targets.map((t) => ({ webhookId: t.webhook_id, url: maskUrl(t.url) })),
    retryDelaysMs: config.retryDelaysMs,
    attemptTimeoutMs: config.attemptTimeoutMs,
  };
  const start = client.workflow.start('deliverEvent', {
    taskQueue: config.taskQueue,
    workflowId: deliveryWorkflowId(event.id),
    args: [input],
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    workflowIdConflictPolicy: opts.replay ? 'TERMINATE_EXISTING' : 'USE_EXISTING',
    staticSummary: `${event.description} for ${event.user_id} (${event.mode})${opts.replay ? ' — replay' : ''}`,
    typedSearchAttributes: [
      { key: EventIdAttr, value: event.id },
      { key: EventTypeAttr, value: event.description },
      { key: UserIdAttr, value: event.user_id },
      { key: ModeAttr, value: event.mode },
      { key: EventStatusAttr, value: event.status },
      // Set here rather than upserted by the workflow: one visibility write less per event.
      { key: WebhookUrlsAttr, value: input.targets.map((t) => t.url) },
    ],
  });
  await withTimeout(start, START_TIMEOUT_MS);
  await db.updateTable('events').set({ dispatched_at: new Date() }).where('id', '=', event.id).where('dispatched_at', 'is', null).execute();
}

/** After the commit: try to start now; on failure the sweeper will (the event is safe in the outbox). */
export async function dispatchOrDefer(temporal: TemporalClientSource, config: Config, db: Db, event: EventRow): Promise<void> {
  try {
    await startDelivery(temporal, config, db, event);
  } catch (err) {
    log.warn('delivery start deferred to the sweeper', { event_id: event.id, error: String((err as Error).message ?? err).slice(0, 200) });
  }
}

/**
 * The outbox sweeper (runs in every worker): starts the workflows of committed
 * events whose start never succeeded — Temporal was down, or the publishing
 * process died between the commit and the start.
 */
export function startSweeper(temporal: TemporalClientSource, config: Config, db: Db, opts: { intervalMs: number; graceMs: number }): () => void {
  let running = false;
  const sweep = async () => {
    if (running) return;
    running = true;
    try {
      const stale = await db
        .selectFrom('events')
        .selectAll()
        .where('dispatched_at', 'is', null)
        .where('created_at', '<', new Date(Date.now() - opts.graceMs))
        .orderBy('created_at')
        .limit(200)
        .execute();
      for (const event of stale) await startDelivery(temporal, config, db, event);
      if (stale.length) log.info('sweeper started deliveries', { count: stale.length });
    } catch (err) {
      log.warn('sweeper pass failed', { error: String((err as Error).message ?? err).slice(0, 200) });
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void sweep(), opts.intervalMs);
  return () => clearInterval(timer);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Temporal did not answer within ${ms} ms`)), ms);
    promise.then((v) => { clearTimeout(timer); resolve(v); }, (e) => { clearTimeout(timer); reject(e); });
  });
}
