import { type RawBuilder, sql } from 'kysely';
import type { Executor } from '../db/database';
import type { EventRow, EventStatus } from './tables';

/**
 * An event's status, derived from its delivery rows (one per webhook) whenever one of
 * them changes: by recording an attempt (src/events/deliveries.ts) and by replay
 * (src/engine/replay.ts). The API specification (3.3) leaves the transitions open:
 *   in_queue  → retrying   an attempt failed and that URL has attempts left
 *   in_queue  → completed  every URL acknowledged (at once when there are no webhooks)
 *   retrying  → completed  every URL acknowledged
 *   in_queue/retrying → failed  nothing pending any more and some URL ran out of
 *                               attempts, got 410 Gone, or its webhook was disabled or deleted
 *   failed/completed → in_queue  replay
 * (A delivery workflow orders the statuses its activities report by another rule:
 * `laterStatus` in workflows/deliver-event.ts.)
 */

/** The rule, once: a scalar SQL expression over `deliveries`, any set of rows with columns `(state, attempts)`. */
export function eventStatusOf(deliveries: RawBuilder<unknown>): RawBuilder<EventStatus> {
  return sql<EventStatus>`(
    select case
      when count(*) filter (where d.state = 'pending') = 0
        then case when count(*) filter (where d.state = 'failed') > 0 then 'failed' else 'completed' end
      when count(*) filter (where d.state = 'pending' and d.attempts > 0) > 0 then 'retrying'
      else 'in_queue'
    end
    from ${deliveries} as d
  )`;
}

/**
 * The event's status from its delivery rows, written to the event (when it moved) and
 * returned, in one statement. Called under the event's row lock after every change of
 * a delivery row. `changes` lets a caller make that change in the same statement:
 * data-modifying CTEs (`with` clauses, comma-separated) and the rows `(state, attempts)`
 * as they are after them, since the statement's other parts still see the rows as they
 * were before it.
 */
export async function refreshEventStatus(trx: Executor, eventId: string, changes?: { ctes: RawBuilder<unknown>; deliveries: RawBuilder<unknown> }): Promise<EventStatus> {
  const deliveries = changes?.deliveries ?? sql`(select state, attempts from event_deliveries where event_id = ${eventId})`;
  const { rows } = await sql<{ status: EventStatus }>`
    with ${changes ? sql`${changes.ctes},` : sql``}
    status as (select ${eventStatusOf(deliveries)} as status),
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
