import { sql } from 'kysely';
import type { Db, Executor } from '../db/database';
import type { Mode } from '../account/tables';
import type { DeliveryState, EventRow, EventStatus } from './tables';
import { type PageParams, paginate } from '../db/paginate';
import { notFound } from '../errors/api-error';
import { isoMillis } from '../format';
import { hasPrefix } from '../ids';
import { ownedBy, type Principal } from '../account/principal';
import { redactUrl } from '../webhooks/url';

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

/**
 * What an event is about, to find it by: the object's id (`result.id`: `trk_…`, `shp_…`,
 * `batch_…`) and, for trackers and shipments, its tracking code (`result.tracking_code`),
 * matched whatever its case since carriers' codes are and people type them. Written here
 * as the indexes events_object_idx and events_tracking_code_idx hold them (migration
 * 2026_11_28_0302): a query uses an index only with its expression exactly.
 */
export const objectIdOf = sql<string | null>`result->>'id'`;
const trackingCodeOf = sql<string | null>`upper(result->>'tracking_code')`;

/**
 * The shape of an object id or tracking code one can search by: ids are a prefix and hex
 * digits, tracking codes letters and digits; 64 leaves room for both, and keeps the search
 * attribute ShiphookObjectId well inside what Temporal takes for a value.
 */
export const OBJECT_REFERENCE = /^[A-Za-z0-9_-]{1,64}$/;
export const OBJECT_REFERENCE_RULE = 'must be 1 to 64 letters, digits, underscores or hyphens';

/** Narrows a listing (GET /events' `status`, `description`, `object_id` and `tracking_code`; the portal's filters). */
export interface EventFilter {
  status?: EventStatus;
  description?: string;
  objectId?: string;
  trackingCode?: string;
}

export async function listEvents(db: Db, who: Principal, page: PageParams, filter: EventFilter = {}) {
  let query = db.selectFrom('events').selectAll().where(ownedBy(who));
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.description) query = query.where('description', '=', filter.description);
  if (filter.objectId) query = query.where(objectIdOf, '=', filter.objectId);
  if (filter.trackingCode) query = query.where(trackingCodeOf, '=', filter.trackingCode.toUpperCase());
  const { items, has_more } = await paginate(query, 'events', page);
  return { events: items.map(eventSummary), has_more };
}

export async function getEvent(db: Db, who: Principal, id: string) {
  const row = await ownEvent(db, who, id);
  return eventView(row, await eventUrls(db, row.id));
}

// ---- publishing -------------------------------------------------------------------

export interface NewEvent {
  /** Chosen by the caller when it must know the id before the event is written (a batch's per-event idempotency keys). */
  id?: string;
  userId: string;
  mode: Mode;
  description: string;
  result: Record<string, unknown>;
  previousAttributes?: Record<string, unknown>;
  /** A test event: delivered only to this webhook (if enabled), marked for receivers. */
  test?: { webhookId: string };
}
