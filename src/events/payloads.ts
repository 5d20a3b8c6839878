import { type ExpressionBuilder, sql } from 'kysely';
import type { Database, Db } from '../db/database';
import type { EventRow, PayloadRow } from './tables';
import { ApiError } from '../errors/api-error';
import { isoMillis } from '../format';
import { hasPrefix } from '../ids';
import { ownEvent } from './events';
import type { Principal } from '../account/principal';

/** Payloads: one record per delivery attempt (COMPATIBILITY.md fields). */
export const MAX_STORED_RESPONSE = 20 * 1024;

/** An attempt succeeded when the endpoint answered 2XX: that acknowledges the event. */
export const acknowledges = (responseCode: number) => responseCode >= 200 && responseCode < 300;

/** `acknowledges` in SQL, over a Payload's `response_code` (of `table` when the query joins others). */
export const acknowledgedSql = (table?: string) => sql<boolean>`${sql.ref(table ? `${table}.response_code` : 'response_code')} between 200 and 299`;

export function payloadView(row: PayloadRow) {
  return {
    id: row.id,
    object: 'Payload' as const,
    created_at: isoMillis(row.created_at),
    updated_at: isoMillis(row.updated_at),
    attempt: row.attempt,
    request_url: row.request_url,
    request_headers: row.request_headers,
    request_body: row.request_body,
    response_code: row.response_code,
    response_headers: row.response_headers,
    response_body: row.response_body,
    total_time: row.total_time,
  };
}

export interface NewPayload {
  /** Made before the POST: the request names it (`X-Shiphook-Delivery-Id`). */
  id: string;
  /** The attempt's number as its request said (`X-Shiphook-Attempt`). */
  attempt: number;
  eventId: string;
  webhookId: string;
  requestUrl: string; // masked
  requestHeaders: Record<string, string>; // Authorization masked
  requestBody: string;
  responseCode: number;
  responseHeaders: Record<string, string>;
  responseBody: string;
  totalTime: number;
}

/** Rows for the payloads table. */
export function payloadRows(payloads: NewPayload[]) {
  return payloads.map((p) => ({
    id: p.id,
    attempt: p.attempt,
    event_id: p.eventId,
    webhook_id: p.webhookId,
    request_url: p.requestUrl,
    request_headers: JSON.stringify(p.requestHeaders),
    request_body: p.requestBody,
    response_code: p.responseCode,
    response_headers: JSON.stringify(p.responseHeaders),
    response_body: p.responseBody.slice(0, MAX_STORED_RESPONSE),
    total_time: p.totalTime,
  }));
}

/**
 * An event's Payloads. They are partitioned by creation time and made after their
 * event, so the bound on `created_at` leaves the older partitions unread.
 */
function ofEvent(event: EventRow) {
  return (eb: ExpressionBuilder<Database, 'payloads'>) => eb.and([eb('event_id', '=', event.id), eb('created_at', '>=', event.created_at)]);
}

export async function listPayloads(db: Db, who: Principal, eventId: string) {
  const event = await ownEvent(db, who, eventId);
  const rows = await db.selectFrom('payloads').selectAll().where(ofEvent(event)).orderBy('id', 'desc').execute();
  return { payloads: rows.map(payloadView) };
}

export async function getPayload(db: Db, who: Principal, eventId: string, payloadId: string) {
  const event = await ownEvent(db, who, eventId);
  const row = hasPrefix(payloadId, 'payload')
    ? await db.selectFrom('payloads').selectAll().where('id', '=', payloadId).where(ofEvent(event)).executeTakeFirst()
    : undefined;
  if (!row) throw new ApiError('PAYLOAD.NOT_FOUND', 'Payload not found.');
  return payloadView(row);
}
