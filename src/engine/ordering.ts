import { sql } from 'kysely';
import type { Executor } from '../db/database';
import type { Mode } from '../account/tables';

/**
 * Order per object (`ordering: per_object`): the events about one object (`result.id`) are
 * sent to the webhook one after another, in the order they were published. One of them has
 * the object's *turn* at a time (a row of `delivery_turns`, whose primary key lets one only):
 * it keeps it through its retries until its delivery is acknowledged or given up, and then
 * the earliest event still pending about that object takes it. "Earliest" is the event id,
 * which is time-ordered: the order of publication. An event committed after a later-id one
 * already had the turn (two publishes of one object racing) waits for it: the turn is never
 * shared. Events whose start Temporal refused (a dispatch incident) are skipped until replayed.
 * Cost: a statement when an attempt to an ordered webhook starts, and one when its delivery
 * settles; none for the others.
 */

/** The object an event is about, for ordering: its `result.id`. Events without one are not held back. */
export function orderedObjectOf(result: Record<string, unknown>): string | undefined {
  const id = result.id;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** One event's delivery to an ordered webhook, about `objectId`. */
export interface OrderedDelivery {
  eventId: string;
  webhookId: string;
  objectId: string;
  /** The event's owner: the account's index on `result->>'id'` finds the object's events. */
  userId: string;
  mode: Mode;
}

/** The object's earliest pending delivery to the webhook other than `eventId` (`e`: events, `d`: its delivery). */
const otherPending = (o: OrderedDelivery) => sql`
  select e.id from events e join event_deliveries d on d.event_id = e.id
  where e.user_id = ${o.userId} and e.mode = ${o.mode} and e.result->>'id' = ${o.objectId} and e.id <> ${o.eventId}
    and d.webhook_id = ${o.webhookId} and d.state = 'pending' and e.dispatch_failed_at is null`;

/** The row `t` of delivery_turns is held by a delivery still pending. */
const LIVE_TURN = sql`exists (select 1 from event_deliveries h where h.event_id = t.event_id and h.webhook_id = t.webhook_id and h.state = 'pending')`;

/**
 * Takes (or keeps) the object's turn for this delivery, if it may go: it has the turn, or the
 * turn is free and no earlier event about the object is pending. Otherwise `behind` names the
 * event it waits for (the one with the turn, else the earliest before it), which the same
 * statement records on the delivery's row for the portal; a delivery that goes clears it.
 */
export async function claimTurn(db: Executor, o: OrderedDelivery): Promise<{ granted: true } | { granted: false; behind?: string }> {
  const { rows } = await sql<{ granted: boolean; behind: string | null }>`
    with ahead as (${otherPending(o)} and e.id < ${o.eventId} order by e.id limit 1),
    holder as (select t.event_id from delivery_turns t where t.webhook_id = ${o.webhookId} and t.object_id = ${o.objectId} and ${LIVE_TURN}),
    claimed as (
      insert into delivery_turns as t (webhook_id, object_id, event_id)
      select ${o.webhookId}, ${o.objectId}, ${o.eventId}
      where coalesce((select event_id from holder) = ${o.eventId}, not exists (select 1 from ahead))
      on conflict (webhook_id, object_id) do update set event_id = excluded.event_id
        where t.event_id = excluded.event_id or not ${LIVE_TURN}
      returning t.event_id
    ),
    outcome as (
      select exists (select 1 from claimed) as granted,
        coalesce((select event_id from holder where event_id <> ${o.eventId}), (select id from ahead)) as behind
    ),
    marked as (
      update event_deliveries set waiting_for = case when (select granted from outcome) then null else (select behind from outcome) end
      where event_id = ${o.eventId} and webhook_id = ${o.webhookId}
        and waiting_for is distinct from (case when (select granted from outcome) then null else (select behind from outcome) end)
    )
    select granted, behind from outcome`.execute(db);
  const row = rows[0]!;
  return row.granted ? { granted: true } : { granted: false, ...(row.behind ? { behind: row.behind } : {}) };
}

/**
 * The delivery was acknowledged or given up: it gives the object's turn back, and the event
 * that may take it is returned (the earliest still pending about the object), for its run to be
 * told. None when another delivery has the turn (it hands it on when it settles) or nothing waits.
 * Called again for a delivery already settled (a retried activity), it names the same one.
 */
export async function passTurn(db: Executor, o: OrderedDelivery): Promise<string | undefined> {
  const { rows } = await sql<{ id: string }>`
    with released as (delete from delivery_turns where webhook_id = ${o.webhookId} and object_id = ${o.objectId} and event_id = ${o.eventId}),
    other_holder as (select 1 from delivery_turns t where t.webhook_id = ${o.webhookId} and t.object_id = ${o.objectId} and t.event_id <> ${o.eventId} and ${LIVE_TURN})
    ${otherPending(o)} and not exists (select 1 from other_holder) order by e.id limit 1`.execute(db);
  return rows[0]?.id;
}
