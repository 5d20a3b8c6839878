import type { Client } from '@temporalio/client';
import { sql } from 'kysely';
import { type Config, retryTaskQueue } from '../config';
import { anyOf, type Executor } from '../db/database';
import type { EventRow } from '../events/tables';
import { redactUrl } from '../webhooks/url';
import { type DeliverEventInput, type DeliveryTarget, deliveryWorkflowId, EventIdAttr, EventTypeAttr, ModeAttr, UserIdAttr, WebhookUrlsAttr } from './contract';
import { deliverEvent } from '../../workflows/deliver-event';

const START_TIMEOUT_MS = 5000;
/**
 * Temporal refuses a search-attribute value over 2 KB (`limit.searchAttributesSizeOfValue`):
 * the URL list stays well under it, each URL cut short, as many as fit. Every URL
 * is still in the workflow's input; this list is only for finding workflows by URL.
 */
const URLS_ATTR_MAX_BYTES = 1500;
const URLS_ATTR_MAX_URL_CHARS = 200;

type EventToStart = Pick<EventRow, 'id' | 'user_id' | 'mode' | 'description' | 'status' | 'replay_id'>;

/**
 * Starts the delivery workflow of a committed event (workflow id = event id).
 * Starting is idempotent: a running workflow of that id is reused, and a new run
 * after a finished one only delivers what the database still has pending (never
 * a URL already acknowledged). A replay replaces a running run at once.
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
  };
  const start = client.workflow.start(deliverEvent, {
    taskQueue: config.taskQueue,
    workflowId: deliveryWorkflowId(event.id),
    args: [input],
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    // A replay (one event's, or a broad one the dispatcher carries out) replaces a run still going.
    workflowIdConflictPolicy: opts.replay || event.replay_id ? 'TERMINATE_EXISTING' : 'USE_EXISTING',
    requestEagerStart: opts.eager ?? false,
    staticSummary: `${event.description} for ${event.user_id} (${event.mode})${opts.replay || event.replay_id ? ' — replay' : ''}`,
    typedSearchAttributes: [
      { key: EventIdAttr, value: event.id },
      { key: EventTypeAttr, value: event.description },
      { key: UserIdAttr, value: event.user_id },
      { key: ModeAttr, value: event.mode },
      // Set here rather than upserted by the workflow: one visibility write less per event.
      { key: WebhookUrlsAttr, value: urlsAttribute(targets) },
    ],
  });
  const handle = await withTimeout(start, START_TIMEOUT_MS);
  return { eager: handle.eagerlyStarted };
}

/** Distinct masked URLs, each at most URLS_ATTR_MAX_URL_CHARS, as many as fit in URLS_ATTR_MAX_BYTES of JSON. */
export function urlsAttribute(targets: DeliveryTarget[]): string[] {
  const urls: string[] = [];
  let bytes = 2; // []
  for (const url of new Set(targets.map((t) => t.url.slice(0, URLS_ATTR_MAX_URL_CHARS)))) {
    const size = Buffer.byteLength(JSON.stringify(url)) + 1;
    if (bytes + size > URLS_ATTR_MAX_BYTES) break;
    urls.push(url);
    bytes += size;
  }
  return urls;
}

/**
 * gRPC codes with which Temporal refuses a start for a reason that retrying the same
 * start cannot fix: INVALID_ARGUMENT (3: a size limit, a malformed value),
 * FAILED_PRECONDITION (9), OUT_OF_RANGE (11). Anything else (unreachable, deadline,
 * overloaded, unauthenticated) is transient: the event is tried again.
 */
const PERMANENT_GRPC_CODES = new Set([3, 9, 11]);

export function isPermanentStartFailure(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'number' && PERMANENT_GRPC_CODES.has(e.code)) return true;
  }
  return false;
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

/** A claimed event and the deliveries its run will attempt. */
export type ClaimedEvent = EventToStart & { targets: DeliveryTarget[] };

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
        .returning(['id', 'user_id', 'mode', 'description', 'status', 'replay_id']),
    )
    .selectFrom('claimed as e')
    .leftJoin('event_deliveries as d', (join) => join.onRef('d.event_id', '=', 'e.id').on('d.state', '=', 'pending'))
    .select(['e.id', 'e.user_id', 'e.mode', 'e.description', 'e.status', 'e.replay_id', 'd.webhook_id', 'd.url'])
    .orderBy('e.id')
    .orderBy('d.webhook_id')
    .execute();
  const claimed = new Map<string, ClaimedEvent>();
  for (const { webhook_id, url, ...event } of rows) {
    let c = claimed.get(event.id);
    if (!c) claimed.set(event.id, (c = { ...event, targets: [] }));
    if (webhook_id !== null && url !== null) c.targets.push(deliveryTarget(webhook_id, url));
  }
  return [...claimed.values()];
}

/** The workflows of these events were started (a broad replay's mark is done with too: replays.ts counts what still has it). */
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
      .set({ dispatch_failed_at: new Date(), dispatch_error: f.error.slice(0, 1000), dispatch_lease_until: null, replay_id: null })
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
