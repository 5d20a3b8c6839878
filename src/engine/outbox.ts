import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { sql } from 'kysely';
import { type Config, retryTaskQueue } from '../config';
import { anyOf, type Db, type Executor } from '../db/database';
import { listen } from '../db/listen';
import { OUTBOX_CHANNEL } from '../events/publish';
import type { EventRow } from '../events/tables';
import { OBJECT_REFERENCE, objectIdOf } from '../events/events';
import { log } from '../log';
import { deliveryMetrics } from '../metrics/delivery';
import { redactUrl } from '../webhooks/url';
import { deliverEvent } from '../../workflows/deliver-event';
import { type DeliverEventInput, type DeliveryTarget, deliveryWorkflowId, EventIdAttr, EventTypeAttr, ModeAttr, ObjectIdAttr, UserIdAttr, WebhookUrlsAttr } from './contract';
import { endReplays } from './replay-end';
import { isPermanentStartFailure } from './start-failures';
import { errorText } from '../errors/error-text';
import { urlsAttribute } from './urls-attribute';
import { idTime } from '../ids';
import { replayedBy, terminateReplacedRun } from './replaced-run';
import { inDispatchSpan } from './tracing';

/**
 * The outbox: a published event is committed with its delivery rows and waits in
 * `events` (dispatched_at null) until a worker's dispatcher claims it with a lease,
 * starts its delivery workflow and marks it dispatched. Temporal being down or slow
 * never loses or blocks a publish; a dispatcher that dies leaves its claims to expire.
 */

/** Events claimed per pass at most, and at least while Temporal struggles (see `batchSize`). */
const BATCH_SIZE = 100;
const MIN_BATCH_SIZE = 5;
/** How long one start may take before it counts as failed (it is tried again). */
const START_TIMEOUT_MS = 5000;
/**
 * Longer than a batch of starts can take (they run at once, each bounded by
 * START_TIMEOUT_MS): then another dispatcher may claim them. Also how long the events
 * a killed worker had claimed wait (then `dispatchBatch` starts only what is still pending).
 */
export const LEASE_MS = 15_000;

/** `object_id`: the `result.id` the event is about (events.ts: objectIdOf), read with the event. */
export type EventToStart = Pick<EventRow, 'id' | 'user_id' | 'mode' | 'description' | 'status' | 'replay_id' | 'traceparent'> & { object_id: string | null };

export interface DispatcherOptions {
  db: Db;
  databaseUrl: string;
  /** Shares its NativeConnection with this process's worker, for eager starts. */
  client: Client;
  config: Config;
  /** Safety net: a pass this often even without a notification (one lost with a dropped connection). */
  intervalMs: number;
}

/**
 * The outbox dispatcher; every worker runs one. Publishing commits an event and
 * NOTIFYs; the dispatcher claims committed events that have no workflow yet with
 * a lease (so several workers share the work and none holds locks while it talks
 * to Temporal), starts their delivery workflows with eager start, so the first
 * workflow task, and with it the first attempt, runs here without a round trip
 * through the server's task queue, and marks them dispatched. An event whose start
 * failed (Temporal unreachable) is released and tried again on the next pass; one
 * whose dispatcher died is claimed again when its lease runs out.
 */
export function startDispatcher(opts: DispatcherOptions): { stop(): Promise<void> } {
  const { db, client, config } = opts;
  let wanted = false;
  let draining: Promise<void> | undefined;
  let stopped = false;
  // Starts run at once; after a failed one (Temporal just restarted and slow to answer,
  // or down) fewer are sent together, so they are not all timed out together: halved
  // per failing pass, doubled per clean one.
  let batchSize = BATCH_SIZE;

  /** Claim a batch with its pending deliveries (a lease, no lock held), start each workflow, mark the started ones dispatched. */
  async function dispatchBatch(): Promise<{ claimed: number; failed: number }> {
    const claimed = await claimUndispatched(db, batchSize, LEASE_MS);
    if (claimed.length === 0) return { claimed: 0, failed: 0 };
    deliveryMetrics.claimed(claimed.length);
    // An event whose deliveries are all settled was started by a dispatcher that lost its
    // mark (it died, or the server's answer never came) and its run has delivered: a second
    // run would have nothing to do, so none is started.
    const settled = claimed.filter(alreadyDelivered).map((e) => e.id);
    const events = claimed.filter((e) => !alreadyDelivered(e));
    const starts = await Promise.allSettled(events.map((e) => startDelivery(client, config, e, e.targets, { eager: true })));
    const started = [...settled, ...events.filter((_, i) => starts[i]!.status === 'fulfilled').map((e) => e.id)];
    const refused: { id: string; user_id: string; error: string }[] = [];
    const failed: string[] = [];
    let transientError: unknown;
    events.forEach((e, i) => {
      const s = starts[i]!;
      if (s.status === 'fulfilled') return;
      if (isPermanentStartFailure(s.reason)) refused.push({ id: e.id, user_id: e.user_id, error: errorText(s.reason, 1000) });
      else {
        failed.push(e.id);
        transientError ??= s.reason;
      }
    });
    await markDispatched(db, started);
    await releaseClaims(db, failed);
    await markDispatchFailed(db, refused);
    // Their marks are cleared: a replay or recovery whose last events these were has ended.
    await endReplays(db, claimed.map((e) => e.replay_id)).catch((err) => log.warn('could not check whether replays ended', { error: errorText(err) }));
    const eager = starts.filter((s) => s.status === 'fulfilled' && s.value.eager).length;
    log.debug('dispatched', { started: started.length - settled.length, settled: settled.length, eager, failed: failed.length, refused: refused.length });
    deliveryMetrics.startsFailed('transient', failed.length);
    deliveryMetrics.startsFailed('incident', refused.length);
    for (const r of refused) {
      // Once per event: it is not claimed again until an operator replays it (that is the action asked for).
      log.warn('dispatch incident: Temporal refused to start the delivery workflow; replay the event once the cause is fixed', { event_id: r.id, user_id: r.user_id, error: errorText(r.error, 300) });
    }
    if (failed.length) {
      // Self-healing (Temporal slow or restarting): info; a lasting outage shows in the outbox lag metric and readiness.
      log.info('delivery starts failed; the next pass retries them', { count: failed.length, error: errorText(transientError) });
    }
    batchSize = failed.length ? Math.max(MIN_BATCH_SIZE, Math.floor(batchSize / 2)) : Math.min(BATCH_SIZE, batchSize * 2);
    return { claimed: claimed.length, failed: failed.length };
  }

  /** Dispatches until nothing is left; a notification during a pass asks for another. */
  function wake(): void {
    wanted = true;
    draining ??= (async () => {
      try {
        while (wanted && !stopped) {
          wanted = false;
          for (;;) {
            const asked = batchSize;
            const { claimed, failed } = await dispatchBatch();
            if (claimed < asked || failed > 0 || stopped) break; // failures wait for the next pass
          }
        }
      } catch (err) {
        log.warn('dispatch pass failed', { error: errorText(err) });
      } finally {
        draining = undefined;
      }
    })();
  }

  // A notification per committed event; on (re)connect, a pass for what was committed meanwhile.
  // While the connection is down, the timer keeps passes going.
  const listener = listen(opts.databaseUrl, OUTBOX_CHANNEL, wake, (listening) => listening && wake());
  const timer = setInterval(wake, opts.intervalMs);

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await draining;
      await listener.close();
    },
  };
}

/**
 * Starts the delivery workflow of a committed event (workflow id = event id).
 * Starting is idempotent: a running workflow of that id is reused, and one that has
 * closed counts as started (a dispatcher that lost its mark may read a delivery as
 * pending just before that run settles it; a second run would deliver it again).
 * Only a replay starts a new run: it replaces a running one at once (replaced-run.ts
 * names the replay in the old run's termination) and follows a closed one.
 * `eager`: the first workflow task comes back in the start response and runs in
 * this process's worker, skipping a round trip through the server's task queue
 * (only when `client` shares its NativeConnection with a running worker).
 */
export async function startDelivery(client: Client, config: Config, event: EventToStart, targets: DeliveryTarget[], opts: { replay?: boolean; eager?: boolean } = {}): Promise<{ eager: boolean }> {
  const input: DeliverEventInput = {
    eventId: event.id,
    targets,
    retryDelaysMs: config.retryDelaysMs,
    attemptTimeoutMs: config.attemptTimeoutMs,
    retryTaskQueue: retryTaskQueue(config),
    retainedUntil: idTime(event.id).getTime() + config.eventRetentionMs,
  };
  const replay = Boolean(opts.replay || event.replay_id);
  const startRun = () => client.workflow.start(deliverEvent, {
    taskQueue: config.taskQueue,
    workflowId: deliveryWorkflowId(event.id),
    args: [input],
    workflowIdReusePolicy: replay ? 'ALLOW_DUPLICATE' : 'REJECT_DUPLICATE',
    // A replay (one event's, or a broad one the dispatcher carries out) replaces a run still going.
    workflowIdConflictPolicy: replay ? 'TERMINATE_EXISTING' : 'USE_EXISTING',
    requestEagerStart: opts.eager ?? false,
    staticSummary: `${event.description} for ${event.user_id} (${event.mode})${replay ? ' — replay' : ''}`,
    typedSearchAttributes: [
      { key: EventIdAttr, value: event.id },
      { key: EventTypeAttr, value: event.description },
      { key: UserIdAttr, value: event.user_id },
      { key: ModeAttr, value: event.mode },
      // Set here rather than upserted by the workflow: one visibility write less per event.
      { key: WebhookUrlsAttr, value: urlsAttribute(targets) },
      // Only an id GET /v2/events?object_id= could be asked for: none rather than one Temporal may refuse.
      ...(event.object_id && OBJECT_REFERENCE.test(event.object_id) ? [{ key: ObjectIdAttr, value: event.object_id }] : []),
    ],
  });
  // A replay first ends the open run with a reason that names it (replaced-run.ts); in the
  // event's trace, the dispatch span is the parent of the start's (tracing.ts).
  const start = () => (replay ? terminateReplacedRun(client, event.id, replayedBy(event.id, event.replay_id)).then(startRun) : startRun().catch(closedRunCounts));
  const handle = await inDispatchSpan(event, { replay, targets: targets.length, eager: opts.eager ?? false }, () => withTimeout(start(), START_TIMEOUT_MS));
  return { eager: handle?.eagerlyStarted ?? false };
}

/** A first start whose event already ran (its run closed): started, with nothing more to do. */
function closedRunCounts(err: unknown): undefined {
  if (err instanceof WorkflowExecutionAlreadyStartedError) return undefined;
  throw err;
}

/** A delivery as its workflow sees it: the URL masked (the input is visible in the Temporal UI). */
const deliveryTarget = (webhookId: string, url: string): DeliveryTarget => ({ webhookId, url: redactUrl(url) });

/** The deliveries still pending of some events, as workflow targets (URLs masked), by event id. */
export async function pendingTargets(db: Executor, eventIds: string[]): Promise<Map<string, DeliveryTarget[]>> {
  const byEvent = new Map<string, DeliveryTarget[]>();
  if (eventIds.length === 0) return byEvent;
  const rows = await db
    .selectFrom('event_deliveries')
    .select(['event_id', 'webhook_id', 'url'])
    .where('event_id', '=', anyOf(eventIds))
    .where('state', '=', 'pending')
    .orderBy('event_id')
    .orderBy('webhook_id')
    .execute();
  for (const r of rows) {
    let targets = byEvent.get(r.event_id);
    if (!targets) byEvent.set(r.event_id, (targets = []));
    targets.push(deliveryTarget(r.webhook_id, r.url));
  }
  return byEvent;
}

/** A claimed event, the deliveries its run will attempt, and whether it has any delivery at all. */
export type ClaimedEvent = EventToStart & { targets: DeliveryTarget[]; has_deliveries: boolean };

/** Every delivery of the event was acknowledged or gave up (a replay is started whatever its state). */
const alreadyDelivered = (e: ClaimedEvent) => e.has_deliveries && e.targets.length === 0 && !e.replay_id;

/**
 * Claims up to `limit` committed events that have no workflow yet and no live
 * lease, oldest first, by setting a lease (the row locks last only as long as the
 * statement does), and reads their pending deliveries in the same statement: one
 * round trip before the starts. Several dispatchers never claim the same event.
 * (The deliveries were committed with their event, so the statement's snapshot has them.)
 */
export async function claimUndispatched(db: Executor, limit: number, leaseMs: number): Promise<ClaimedEvent[]> {
  const rows = await db
    .with('claimed', (q) =>
      q
        .updateTable('events')
        .set({ dispatch_lease_until: sql<Date>`now() + ${leaseMs} * interval '1 millisecond'` })
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('events')
            .select('id')
            .where('dispatched_at', 'is', null)
            .where('dispatch_failed_at', 'is', null)
            .where((w) => w.or([w('dispatch_lease_until', 'is', null), w('dispatch_lease_until', '<', sql<Date>`now()`)]))
            .orderBy('created_at')
            .limit(limit)
            .forNoKeyUpdate()
            .skipLocked(),
        )
        .returning(['id', 'user_id', 'mode', 'description', 'status', 'replay_id', 'traceparent', objectIdOf.as('object_id')]),
    )
    .selectFrom('claimed as e')
    .leftJoin('event_deliveries as d', (join) => join.onRef('d.event_id', '=', 'e.id').on('d.state', '=', 'pending'))
    .select(['e.id', 'e.user_id', 'e.mode', 'e.description', 'e.status', 'e.replay_id', 'e.traceparent', 'e.object_id', 'd.webhook_id', 'd.url'])
    .select((eb) => eb.exists(eb.selectFrom('event_deliveries as any_d').select('any_d.event_id').whereRef('any_d.event_id', '=', 'e.id')).as('has_deliveries'))
    .orderBy('e.id')
    .orderBy('d.webhook_id')
    .execute();
  const claimed = new Map<string, ClaimedEvent>();
  for (const { webhook_id, url, has_deliveries, ...event } of rows) {
    let c = claimed.get(event.id);
    if (!c) claimed.set(event.id, (c = { ...event, has_deliveries: Boolean(has_deliveries), targets: [] }));
    if (webhook_id !== null && url !== null) c.targets.push(deliveryTarget(webhook_id, url));
  }
  return [...claimed.values()];
}

/** The workflows of these events were started (a broad replay's mark is done with too: replay.ts counts what still has it). */
export async function markDispatched(db: Executor, eventIds: string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await db.updateTable('events').set({ dispatched_at: new Date(), dispatch_lease_until: null, replay_id: null }).where('id', '=', anyOf(eventIds)).where('dispatched_at', 'is', null).execute();
}

/** Their starts failed: the next pass may claim them again at once. */
export async function releaseClaims(db: Executor, eventIds: string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await db.updateTable('events').set({ dispatch_lease_until: null }).where('id', '=', anyOf(eventIds)).where('dispatched_at', 'is', null).execute();
}

/**
 * Temporal refused their starts for good: marked as a dispatch incident (no longer
 * claimed; an operator finds them with the replay filter `dispatch_failed` and a
 * replay clears the mark).
 */
export async function markDispatchFailed(db: Executor, failures: { id: string; error: string }[]): Promise<void> {
  for (const f of failures) {
    await db
      .updateTable('events')
      .set({ dispatch_failed_at: new Date(), dispatch_error: errorText(f.error, 1000), dispatch_lease_until: null, replay_id: null })
      .where('id', '=', f.id)
      .where('dispatched_at', 'is', null)
      .execute();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Temporal did not answer within ${ms} ms`)), ms);
    promise.then((v) => { clearTimeout(timer); resolve(v); }, (e) => { clearTimeout(timer); reject(e); });
  });
}
