import { sql } from 'kysely';
import type { Executor } from '../db/database';

/**
 * A webhook's rate limit (`rate_limit`, deliveries per second), held across every worker
 * process by one row per webhook in PostgreSQL (`webhook_rate_slots`), with two schedules
 * spaced a little over 1/limit s apart (`slotSpacingMs`):
 * - `next_at`, the queue: a delivery reserves its *slot* (the later of `next_at` and now,
 *   pushing `next_at` one spacing on). A slot far off holds the delivery: its run sleeps until
 *   just before it (a durable timer), so held deliveries wake once each, in the order they came.
 * - `sent_at`, the send itself: at its slot a delivery takes its *send time* the same way
 *   from the last one taken, waits for it and sends. However late a delivery comes to its
 *   slot (a busy worker, a slow workflow task), requests leave at least a spacing apart, and
 *   a late one only delays the next ones a little instead of wasting its slot: the backlog
 *   drains at the pace. A request is never sent more than `slotToleranceMs` after its send
 *   time: one a starved worker's timer woke later takes another (activities/admission.ts), so
 *   the receiver gets no more than the limit in a second plus one while the requests' way to
 *   it varies by less than a spacing and a quarter of a second (`PACE`). Send times are never
 *   taken more than 5 s ahead (`takeSendTime`), so workers that fall behind hold deliveries again instead of queueing
 *   sends ever further off.
 *
 * Not rate-limiter-flexible's RateLimiterPostgres, which the API's limits use: it counts in
 * fixed windows, which lets twice the limit through across a window's edge, and it answers
 * "not now, try in n ms", so every held delivery would poll and whichever polled first would
 * go. The cost is two statements per delivery to a limited webhook; none for the others.
 */

/**
 * Requests are paced a fifth under the limit: what the receiver counts in a second is sent
 * over a quarter of a second more, so the way there (the tolerance, then the network and a
 * loaded machine's scheduling, which on the two-core production topology of the cluster test
 * stretched it past a tenth of a second) may vary by a spacing and a quarter of a second before
 * a second holds one more than the limit. A limit is a ceiling: the backlog drains at 4/5 of it.
 */
const PACE = 1.25;

/** The spacing of a limit's slots, in ms. */
export const slotSpacingMs = (perSecond: number) => (1000 / perSecond) * PACE;

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

/**
 * A request goes only if it is sent at most this long after its send time; otherwise it takes
 * another. Half a spacing, leaving the other half to the request's way to the receiver,
 * and at least 50 ms (a high limit's spacing is shorter than a timer's precision).
 */
export const slotToleranceMs = (perSecond: number) => Math.max(slotSpacingMs(perSecond) / 2, 50);

/**
 * Takes the delivery's send time, a spacing after the last one taken or now, unless that is
 * more than `maxWaitMs` away (workers far behind their slots): then nothing is taken, and `at`
 * says when there will be room. Epoch ms of the database's clock, which the workers' share to
 * within a few ms (NTP): a wait measured from when the answer arrived would shift each send by
 * its round trip, which a busy worker makes long, and sends a spacing apart could leave together.
 */
export async function takeSendTime(db: Executor, webhookId: string, perSecond: number, maxWaitMs: number): Promise<{ at: number; taken: boolean }> {
  const spacing = slotSpacingMs(perSecond);
  const { rows } = await sql<{ at: number; taken: boolean }>`
    with now as (select clock_timestamp() as t),
    taken as (
      insert into webhook_rate_slots as s (webhook_id, next_at, sent_at) values (${webhookId}, (select t from now), (select t from now))
      on conflict (webhook_id) do update set sent_at = greatest(s.sent_at + ${spacing}::float8 * interval '1 millisecond', (select t from now))
        where s.sent_at is null or s.sent_at + ${spacing}::float8 * interval '1 millisecond' <= (select t from now) + ${maxWaitMs}::float8 * interval '1 millisecond'
      returning s.sent_at
    )
    select (extract(epoch from coalesce((select sent_at from taken), (select sent_at + ${spacing}::float8 * interval '1 millisecond' from webhook_rate_slots where webhook_id = ${webhookId}))) * 1000)::float8 as at,
      exists (select 1 from taken) as taken`.execute(db);
  return rows[0]!;
}

/** A delivery held again when it came to send (no send time it could go at): the portal says it waits, and until when. */
export async function markHeld(db: Executor, eventId: string, webhookId: string, at: number): Promise<void> {
  await db.updateTable('event_deliveries').set({ waiting_for: 'rate_limit', next_attempt_at: new Date(at) }).where('event_id', '=', eventId).where('webhook_id', '=', webhookId).execute();
}

/** A held delivery is being sent: it no longer waits (the portal stops saying so). */
export async function clearWaiting(db: Executor, eventId: string, webhookId: string): Promise<void> {
  await db.updateTable('event_deliveries').set({ waiting_for: null }).where('event_id', '=', eventId).where('webhook_id', '=', webhookId).execute();
}
