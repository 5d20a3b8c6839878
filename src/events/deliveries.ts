import { sql } from 'kysely';
import { anyOf, type Db } from '../db/database';
import type { DeliveryState, EventRow, EventStatus } from './tables';
import type { CustomHeader } from '../webhooks/tables';
import { type EventUrls, urlsOf } from './events';
import { lockEventOnly, refreshEventStatus } from './status';
import { type NewPayload, payloadRows } from './payloads';
import { countFailures, type FailureRun, failureRun } from '../webhooks/webhooks';

/**
 * Event deliveries as the delivery engine reads and writes them (one row per event
 * and webhook). An attempt reads the event and all its deliveries in one go, sends,
 * and records the outcomes of a batch of targets in one transaction under the
 * event's lock, which is where the event status moves (see events.ts).
 */

/** A delivery row with what its webhook says about sending to it. */
export interface DeliveryWithWebhook {
  webhookId: string;
  /** As stored: may carry `user:password@` for Basic auth. Mask before showing it. */
  url: string;
  state: DeliveryState;
  /** Attempts sent so far: the next one is number `attempts + 1`. */
  attempts: number;
  /** Undefined when the webhook row is gone. */
  webhook?: {
    customHeaders: CustomHeader[];
    secret: string | null;
    /** A rotated-out secret still in its grace period (signs beside `secret`). */
    previousSecret: string | null;
    disabledAt: Date | null;
    deletedAt: Date | null;
    failingSince: Date | null;
  };
}

export interface AttemptContext {
  event: EventRow;
  deliveries: Map<string, DeliveryWithWebhook>;
  /** As of sending: what the delivered body says. */
  urls: EventUrls;
}

/**
 * Everything one attempt needs, in one read: the event's columns come once per
 * delivery row (left joins: an event without deliveries is one row). One round trip
 * instead of two parallel ones saves a statement per attempt (bench/, `--only retry`).
 * Undefined for an unknown event.
 */
export async function loadAttempt(db: Db, eventId: string): Promise<AttemptContext | undefined> {
  const rows = await db
    .selectFrom('events as e')
    .leftJoin('event_deliveries as d', 'd.event_id', 'e.id')
    .leftJoin('webhooks as w', 'w.id', 'd.webhook_id')
    .selectAll('e')
    .select(['d.webhook_id', 'd.url', 'd.state', 'd.attempts', 'w.id as hook_id', 'w.custom_headers', 'w.webhook_secret', 'w.previous_webhook_secret', 'w.previous_secret_expires_at', 'w.disabled_at', 'w.deleted_at', 'w.failing_since'])
    .where('e.id', '=', eventId)
    .orderBy('d.webhook_id')
    .execute();
  const first = rows[0];
  if (!first) return undefined;
  const { webhook_id: _w, url: _u, state: _s, attempts: _a, hook_id: _h, custom_headers: _c, webhook_secret: _ws, previous_webhook_secret: _p, previous_secret_expires_at: _pe, disabled_at: _di, deleted_at: _de, failing_since: _f, ...event } = first;
  const deliveries = new Map<string, DeliveryWithWebhook>();
  const sent: { url: string; state: DeliveryState }[] = [];
  for (const r of rows) {
    if (r.webhook_id === null || r.url === null || r.state === null || r.attempts === null) continue; // no deliveries
    sent.push({ url: r.url, state: r.state });
    deliveries.set(r.webhook_id, {
      webhookId: r.webhook_id,
      url: r.url,
      state: r.state,
      attempts: r.attempts,
      webhook: r.hook_id
        ? {
            customHeaders: r.custom_headers ?? [],
            secret: r.webhook_secret,
            previousSecret: r.previous_secret_expires_at && r.previous_secret_expires_at.getTime() > Date.now() ? r.previous_webhook_secret : null,
            disabledAt: r.disabled_at,
            deletedAt: r.deleted_at,
            failingSince: r.failing_since,
          }
        : undefined,
    });
  }
  return { event, deliveries, urls: urlsOf(sent) };
}

/** The outcome of one target in an attempt. */
export interface AttemptRecord {
  webhookId: string;
  /** The delivery as the attempt found it. */
  before: { state: DeliveryState; attempts: number };
  /** The delivery's state after this attempt. */
  state: DeliveryState;
  /** What was sent and received; absent when nothing was sent (webhook disabled or deleted). */
  payload?: NewPayload;
}

/** What recording a batch of outcomes gives back. */
export interface Recorded {
  /** The event status after the batch. */
  status: EventStatus;
  /** Failures counted by the same statement (later attempts), by webhook id; the caller counts any others. */
  failureRuns: Map<string, FailureRun>;
}

/**
 * Records a batch of outcomes of one event: the Payloads, the delivery states, and
 * the event status derived from them, in one transaction under the event's lock
 * (concurrent attempts of one event take turns). Returns the event status.
 *
 * A failed retry with attempts left (pending before and after, not the first
 * attempt) cannot move the status: the event is `retrying` before and after (see
 * the transitions in events.ts). Those batches, the bulk of the work while an
 * endpoint is down, are one statement with no lock, which also counts each
 * webhook's failure (webhooks.ts) and returns its run.
 */
export async function recordAttempts(db: Db, eventId: string, records: AttemptRecord[]): Promise<Recorded> {
  if (records.every((r) => r.payload && r.state === 'pending' && r.before.state === 'pending' && r.before.attempts >= 1)) {
    const webhookIds = records.map((r) => r.webhookId);
    const counted = await db
      .with('recorded', (q) => q.insertInto('payloads').values(payloadRows(records.map((r) => r.payload!))))
      .with('attempted', (q) =>
        q
          .updateTable('event_deliveries')
          .set((eb) => ({ attempts: eb('attempts', '+', 1), updated_at: new Date() }))
          .where('event_id', '=', eventId)
          .where('webhook_id', '=', anyOf(webhookIds)),
      )
      .with('counted', () => countFailures(db, webhookIds, new Date()))
      .selectFrom('counted')
      .selectAll()
      .execute();
    const failureRuns = new Map<string, FailureRun>();
    for (const row of counted) {
      const run = failureRun(row);
      if (run) failureRuns.set(row.id, run);
    }
    return { status: 'retrying', failureRuns };
  }
  const payloads = payloadRows(records.flatMap((r) => (r.payload ? [r.payload] : [])));
  const column = <K extends keyof (typeof payloads)[number]>(k: K) => payloads.map((p) => p[k]);
  const webhookIds = records.map((r) => r.webhookId);
  const status = await db.transaction().execute(async (trx) => {
    await lockEventOnly(trx, eventId);
    // Then one statement (arrays keep its text the same for any batch size): the
    // Payloads, the delivery rows, and the status from the rows as they are now.
    return refreshEventStatus(trx, eventId, {
      ctes: sql`
        recorded as (
          insert into payloads (id, event_id, webhook_id, request_url, request_headers, request_body, response_code, response_headers, response_body, total_time)
          select id, event_id, webhook_id, request_url, request_headers::jsonb, request_body, response_code, response_headers::jsonb, response_body, total_time
          from unnest(${column('id')}::text[], ${column('event_id')}::text[], ${column('webhook_id')}::text[], ${column('request_url')}::text[],
            ${column('request_headers')}::text[], ${column('request_body')}::text[], ${column('response_code')}::int[],
            ${column('response_headers')}::text[], ${column('response_body')}::text[], ${column('total_time')}::int[])
            as p(id, event_id, webhook_id, request_url, request_headers, request_body, response_code, response_headers, response_body, total_time)
        ),
        changed as (
          update event_deliveries d
          set state = v.state, attempts = d.attempts + v.sent, updated_at = now()
          from unnest(${webhookIds}::text[], ${records.map((r) => r.state)}::text[], ${records.map((r) => (r.payload ? 1 : 0))}::int[])
            as v(webhook_id, state, sent)
          where d.event_id = ${eventId} and d.webhook_id = v.webhook_id
          returning d.state, d.attempts
        )`,
      deliveries: sql`(
        select state, attempts from changed
        union all
        select state, attempts from event_deliveries where event_id = ${eventId} and webhook_id <> all(${webhookIds}::text[])
      )`,
    });
  });
  return { status, failureRuns: new Map() };
}
