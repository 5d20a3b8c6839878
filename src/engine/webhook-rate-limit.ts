import { sql } from 'kysely';
import type { Executor } from '../db/database';

/**
 * A webhook's rate limit (`rate_limit`, deliveries per second), held across every worker
 * process by one row per webhook in PostgreSQL: `webhook_rate_slots.next_at`, the next free
 * sending slot. A delivery reserves its slot with one UPDATE (the later of `next_at` and now,
 * pushing `next_at` one spacing, 1/limit s, on) and is sent at it, so requests leave at
 * least a spacing apart whichever worker sends them: never more than the limit in a second,
 * plus one sent at most `slotToleranceMs` late. Held deliveries queue in the order they
 * reserved, and each wakes once, at its slot.
 *
 * Not rate-limiter-flexible's RateLimiterPostgres, which the API's limits use: it counts in
 * fixed windows, which lets twice the limit through across a window's edge, and it answers
 * "not now, try in n ms", so every held delivery would poll and whichever polled first would
 * go. The cost is one statement per delivery to a limited webhook; none for the others.
 */

/** The spacing of a limit's slots, in ms. */
export const slotSpacingMs = (perSecond: number) => 1000 / perSecond;

/**
 * A slot is used only by a request sent at most this late (its attempt started late: a busy
 * or lost worker); a later one reserves a new slot. Half a spacing, leaving the other half to
 * the request's way to the receiver, and at least 50 ms (a high limit's spacing is shorter
 * than a timer's precision).
 */
export const slotToleranceMs = (perSecond: number) => Math.max(slotSpacingMs(perSecond) / 2, 50);

/**
 * How long before its slot a held delivery's attempt starts (a durable timer wakes the run
 * then; its attempt, a local activity, waits out the rest in the worker), and the longest wait
 * for a slot an attempt makes itself rather than hand back to the run: time for a workflow task
 * to start, at most 1 s, and about 100 slots' worth, so that a high limit's held deliveries do
 * not take too many of a worker's task slots while they wait (at 1,000/s: 200 at once).
 */
export const slotLeadMs = (perSecond: number) => Math.min(1000, Math.max(200, 100 * slotSpacingMs(perSecond)));

export interface SlotRequest {
  eventId: string;
  webhookId: string;
  perSecond: number;
}

/**
 * Reserves the delivery's slot (epoch ms, in this process's clock; the database's clock
 * only measures the wait). A slot further than `slotLeadMs` away holds the delivery: the
 * same statement records that on its row (`waiting_for`, `next_attempt_at`) for the portal.
 */
export async function reserveSlot(db: Executor, { eventId, webhookId, perSecond }: SlotRequest): Promise<{ slotAt: number; held: boolean }> {
  const spacing = slotSpacingMs(perSecond);
  const holdBeyond = slotLeadMs(perSecond);
  // One reading of the clock for the slot, the hold and the wait, so they agree.
  const { rows } = await sql<{ wait_ms: number; held: boolean }>`
    with now as (select clock_timestamp() as t),
    slot as (
      insert into webhook_rate_slots as s (webhook_id, next_at) values (${webhookId}, (select t from now) + ${spacing}::float8 * interval '1 millisecond')
      on conflict (webhook_id) do update set next_at = greatest(s.next_at, (select t from now)) + ${spacing}::float8 * interval '1 millisecond'
      returning s.next_at - ${spacing}::float8 * interval '1 millisecond' as at
    ),
    wait as (select at, (extract(epoch from (at - (select t from now))) * 1000)::float8 as ms from slot),
    held as (
      update event_deliveries set waiting_for = 'rate_limit', next_attempt_at = (select at from wait)
      where event_id = ${eventId} and webhook_id = ${webhookId} and (select ms from wait) > ${holdBeyond}::float8
    )
    select ms as wait_ms, ms > ${holdBeyond}::float8 as held from wait`.execute(db);
  const { wait_ms: waitMs, held } = rows[0]!;
  return { slotAt: Date.now() + Math.max(0, waitMs), held };
}

/** A held delivery is being sent: it no longer waits (the portal stops saying so). */
export async function clearWaiting(db: Executor, eventId: string, webhookId: string): Promise<void> {
  await db.updateTable('event_deliveries').set({ waiting_for: null }).where('event_id', '=', eventId).where('webhook_id', '=', webhookId).execute();
}
