import { type RawBuilder, sql } from 'kysely';
import type { Db, Executor } from '../db/database';
import type { Mode } from '../account/tables';
import type { DeliveryState, EventRow, EventStatus } from './tables';
import { type PageParams, paginate } from '../db/paginate';
import { ApiError, notFound } from '../errors/api-error';
import { isoMillis } from '../format';
import { hasPrefix, newId } from '../ids';
import { ownedBy, type Principal } from '../account/principal';
import { redactUrl } from '../webhooks/url';
import { enabledWebhooks } from '../webhooks/webhooks';

/**
 * Events (the API specification, 2.4, 3.3 and 4.3). An event's delivery state lives in
 * event_deliveries, one row per webhook; `pending_urls` (not yet acknowledged,
 * including URLs that ran out of attempts) and `completed_urls` are read from it,
 * credentials masked.
 *
 * Status transitions (the API specification, 3.3, leaves them open):
 *   in_queue  → retrying   an attempt failed and that URL has attempts left
 *   in_queue  → completed  every URL acknowledged (at once when there are no webhooks)
 *   retrying  → completed  every URL acknowledged
 *   in_queue/retrying → failed  nothing pending any more and some URL ran out of
 *                               attempts, got 410 Gone, or its webhook was disabled or deleted
 *   failed/completed → in_queue  replay
 */

export interface EventUrls {
  pending_urls: string[];
  completed_urls: string[];
}

export function eventSummary(row: EventRow) {
  return {
    id: row.id,
    object: 'Event' as const,
    mode: row.mode,
    description: row.description,
    status: row.status,
    created_at: isoMillis(row.created_at),
    updated_at: isoMillis(row.updated_at),
  };
}

/** GET /events/:id: everything but `result`. */
export function eventView(row: EventRow, urls: EventUrls) {
  return { ...eventSummary(row), previous_attributes: row.previous_attributes, ...urls };
}

/** What a webhook receives: the full Event with `result`. */
export function eventDelivery(row: EventRow, urls: EventUrls) {
  return {
    id: row.id,
    object: 'Event' as const,
    mode: row.mode,
    description: row.description,
    previous_attributes: row.previous_attributes,
    result: row.result,
    status: row.status,
    pending_urls: urls.pending_urls,
    completed_urls: urls.completed_urls,
    created_at: isoMillis(row.created_at),
    updated_at: isoMillis(row.updated_at),
  };
}

export async function eventUrls(db: Executor, eventId: string): Promise<EventUrls> {
  const rows = await db.selectFrom('event_deliveries').select(['url', 'state']).where('event_id', '=', eventId).orderBy('webhook_id').execute();
  return urlsOf(rows);
}

/** `pending_urls` and `completed_urls` from an event's delivery rows (ordered by webhook id), masked. */
export function urlsOf(rows: { url: string; state: DeliveryState }[]): EventUrls {
  return {
    pending_urls: rows.filter((r) => r.state !== 'completed').map((r) => redactUrl(r.url)),
    completed_urls: rows.filter((r) => r.state === 'completed').map((r) => redactUrl(r.url)),
  };
}

export async function ownEvent(db: Executor, who: Principal, id: string): Promise<EventRow> {
  const row = hasPrefix(id, 'evt')
    ? await db.selectFrom('events').selectAll().where('id', '=', id).where(ownedBy(who)).executeTakeFirst()
    : undefined;
  if (!row) throw notFound('Event not found.');
  return row;
}

/** Narrows a listing (the portal's filters; GET /events takes none). */
export interface EventFilter {
  status?: EventStatus;
  description?: string;
}

export async function listEvents(db: Db, who: Principal, page: PageParams, filter: EventFilter = {}) {
  let query = db.selectFrom('events').selectAll().where(ownedBy(who));
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.description) query = query.where('description', '=', filter.description);
  const { items, has_more } = await paginate(query, 'events', page);
  return { events: items.map(eventSummary), has_more };
}

export async function getEvent(db: Db, who: Principal, id: string) {
  const row = await ownEvent(db, who, id);
  return eventView(row, await eventUrls(db, row.id));
}

// ---- publishing -------------------------------------------------------------------

export interface NewEvent {
  userId: string;
  mode: Mode;
  description: string;
  result: Record<string, unknown>;
  previousAttributes?: Record<string, unknown>;
  /** A test event: delivered only to this webhook (if enabled), marked for receivers. */
  test?: { webhookId: string };
}

/** Committed events wait here until a worker's dispatcher starts their delivery (delivery/dispatcher.ts). */
export const OUTBOX_CHANNEL = 'shiphook_outbox';

/**
 * Writes the Event and one delivery row per enabled webhook of its user and mode,
 * in one transaction, and wakes the workers' dispatchers (NOTIFY, sent on commit).
 * An event without webhooks is `completed` at once and has nothing to dispatch.
 * `dispatched_at` stays null until a dispatcher started the delivery workflow, so
 * a committed event is never lost, whatever happens to Temporal or to this process.
 */
export async function insertEvent(db: Db, input: NewEvent): Promise<{ event: EventRow; urls: EventUrls }> {
  return db.transaction().execute(async (trx) => {
    const user = await trx.selectFrom('users').select('id').where('id', '=', input.userId).where('deleted_at', 'is', null).executeTakeFirst();
    if (!user) throw new ApiError('PARAMETER.FORBIDDEN', 'The event could not be published.', [{ field: 'user_id', message: 'no such user' }]);
    const enabled = await enabledWebhooks(trx, input.userId, input.mode);
    const hooks = input.test ? enabled.filter((h) => h.id === input.test!.webhookId) : enabled;
    const id = newId('evt');
    const event = await trx
      .insertInto('events')
      .values({
        id,
        user_id: input.userId,
        mode: input.mode,
        description: input.description,
        status: hooks.length === 0 ? 'completed' : 'in_queue',
        result: JSON.stringify(input.result),
        previous_attributes: JSON.stringify(input.previousAttributes ?? {}),
        test: input.test !== undefined,
        dispatched_at: hooks.length === 0 ? new Date() : null, // nothing to deliver
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (hooks.length) {
      await trx.insertInto('event_deliveries').values(hooks.map((h) => ({ event_id: id, webhook_id: h.id, url: h.url }))).execute();
      await sql`select pg_notify(${OUTBOX_CHANNEL}, '')`.execute(trx);
    }
    return { event, urls: urlsOf(hooks.map((h) => ({ url: h.url, state: 'pending' as const }))) };
  });
}

/**
 * The event's status from its delivery rows (see the transitions above), written to
 * the event (when it moved) and returned, in one statement. Called under the
 * event's row lock after every change of a delivery row. `changes` lets a caller
 * make that change in the same statement: data-modifying CTEs (`with` clauses,
 * comma-separated) and the rows `(state, attempts)` as they are after them, since
 * the statement's other parts still see the rows as they were before it.
 */
export async function refreshEventStatus(trx: Executor, eventId: string, changes?: { ctes: RawBuilder<unknown>; deliveries: RawBuilder<unknown> }): Promise<EventStatus> {
  const deliveries = changes?.deliveries ?? sql`(select state, attempts from event_deliveries where event_id = ${eventId})`;
  const { rows } = await sql<{ status: EventStatus }>`
    with ${changes ? sql`${changes.ctes},` : sql``}
    status as (
      select case
        when count(*) filter (where d.state = 'pending') = 0
          then case when count(*) filter (where d.state = 'failed') > 0 then 'failed' else 'completed' end
        when count(*) filter (where d.state = 'pending' and d.attempts > 0) > 0 then 'retrying'
        else 'in_queue'
      end as status
      from ${deliveries} as d
    ),
    moved as (
      update events set status = (select status from status), updated_at = now()
      where id = ${eventId} and status <> (select status from status)
    )
    select status from status`.execute(trx);
  return rows[0]!.status;
}

/**
 * Locks the event row so concurrent attempts of one event update its status one at a
 * time. `FOR NO KEY UPDATE`, as every lock on an event row (its id never changes): a
 * Payload's or delivery row's foreign key takes a key-share lock on the event at the end
 * of its statement, which `FOR UPDATE` would block — a statement that had already
 * updated a delivery row would then deadlock with a lock holder waiting for that row.
 */
export async function lockEvent(trx: Executor, eventId: string): Promise<EventRow | undefined> {
  return lockedEvent(trx, eventId).selectAll().executeTakeFirst();
}

/** The same lock without reading the row (an attempt being recorded needs only the lock). */
export async function lockEventOnly(trx: Executor, eventId: string): Promise<void> {
  await lockedEvent(trx, eventId).select('id').execute();
}

function lockedEvent(trx: Executor, eventId: string) {
  return trx.selectFrom('events').where('id', '=', eventId).forNoKeyUpdate();
}
