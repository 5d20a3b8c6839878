import { sql } from 'kysely';
import { anyOf, type Db, type Executor } from '../db/database';
import { ownedBy, type Principal } from '../account/principal';
import { isoSeconds } from '../format';
import { redactUrl } from '../webhooks/url';
import type { DeliveryState, EventStatus } from './tables';
import { eventStatusOf, lockEventOnly, refreshEventStatus } from './status';
import { notDeleted } from '../db/soft-delete';
import { acknowledgedSql, type NewPayload, payloadRows } from './payloads';
import { idTime } from '../ids';
import { countFailures, type FailureRun, failureRun } from '../webhooks/health';

/**
 * Recording delivery attempts (one row per event and webhook in event_deliveries):
 * the outcomes of a batch of targets in one transaction under the event's lock,
 * which is where the event status moves (src/events/status.ts). The attempt's read
 * is the activity's own (activities/deliver.ts).
 */

/** Outcomes that arrive within this long of each other are recorded in one transaction. */
const GATHER_MS = 100;

/**
 * A delivery's state only moves forward: pending → completed or failed, failed → completed
 * (an endpoint that acknowledged is delivered). Two attempts of one event can overlap — a
 * local activity outlives its workflow task when the task times out, and the task's retry
 * runs it again — and each found the delivery pending. Whichever records second must not
 * undo the first: a `completed` delivery made `pending` again after its run ended would have
 * nothing left to retry it. Every POST sent is still recorded and counted.
 * `d`: the row as it is; `v`: the record.
 */
const FORWARD_STATE = sql`case when d.state = 'completed' or (d.state = 'failed' and v.state = 'pending') then d.state else v.state end`;

/** The outcome of one target in an attempt. */
export interface AttemptRecord {
  webhookId: string;
  /** The delivery as the attempt found it. */
  before: { state: DeliveryState; attempts: number };
  /** The delivery's state after this attempt. */
  state: DeliveryState;
  /** What was sent and received; absent when nothing was sent (webhook disabled or deleted). */
  payload?: NewPayload;
  /** When the next attempt is planned (a failed attempt with attempts left); absent otherwise, which clears it. */
  nextAttemptAt?: Date;
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
 * the transitions in status.ts). Those batches, the bulk of the work while an
 * endpoint is down, are one statement with no lock, which also counts each
 * webhook's failure (webhooks/health.ts) and returns its run.
 */
export async function recordAttempts(db: Db, eventId: string, records: AttemptRecord[]): Promise<Recorded> {
  if (records.every((r) => r.payload && r.state === 'pending' && r.before.state === 'pending' && r.before.attempts >= 1)) {
    const webhookIds = records.map((r) => r.webhookId);
    const nextAttempts = nextAttemptsOf(records);
    const counted = await db
      .with('recorded', (q) => q.insertInto('payloads').values(payloadRows(records.map((r) => r.payload!))))
      .with('attempted', (q) =>
        q
          .updateTable('event_deliveries')
          .set((eb) => ({
            attempts: eb('attempts', '+', 1),
            // Each webhook's own planned time, by its place in the batch; none once an
            // overlapping attempt ended the delivery (FORWARD_STATE).
            next_attempt_at: sql<Date | null>`case when state = 'pending' then (${nextAttempts}::timestamptz[])[array_position(${webhookIds}::text[], webhook_id)] end`,
            updated_at: new Date(),
          }))
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
          insert into payloads (id, attempt, event_id, webhook_id, request_url, request_headers, request_body, response_code, response_headers, response_body, total_time)
          select id, attempt, event_id, webhook_id, request_url, request_headers::jsonb, request_body, response_code, response_headers::jsonb, response_body, total_time
          from unnest(${column('id')}::text[], ${column('attempt')}::int[], ${column('event_id')}::text[], ${column('webhook_id')}::text[], ${column('request_url')}::text[],
            ${column('request_headers')}::text[], ${column('request_body')}::text[], ${column('response_code')}::int[],
            ${column('response_headers')}::text[], ${column('response_body')}::text[], ${column('total_time')}::int[])
            as p(id, attempt, event_id, webhook_id, request_url, request_headers, request_body, response_code, response_headers, response_body, total_time)
        ),
        changed as (
          update event_deliveries d
          set state = ${FORWARD_STATE}, attempts = d.attempts + v.sent,
            next_attempt_at = case when d.state = 'pending' then v.next_attempt_at end, updated_at = now()
          from unnest(${webhookIds}::text[], ${records.map((r) => r.state)}::text[], ${records.map((r) => (r.payload ? 1 : 0))}::int[],
            ${nextAttemptsOf(records)}::timestamptz[])
            as v(webhook_id, state, sent, next_attempt_at)
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

/** Each record's planned next attempt, null where there is none (a success or a give-up clears it). */
function nextAttemptsOf(records: AttemptRecord[]): (string | null)[] {
  return records.map((r) => (r.state === 'pending' && r.nextAttemptAt ? r.nextAttemptAt.toISOString() : null));
}

/**
 * Records an attempt's outcomes in as few transactions as possible without holding a
 * fast answer back for a slow one: what arrives within GATHER_MS of the first
 * unrecorded outcome is recorded together, and everything at once when all `expected`
 * are in. Batches are recorded one after another; `done` gives the status after the
 * last one and the failure runs all of them counted.
 */
export function attemptRecorder(db: Db, eventId: string, expected: number) {
  const waiting: AttemptRecord[] = [];
  let arrived = 0;
  let timer: NodeJS.Timeout | undefined;
  let status: Recorded['status'] | undefined;
  const failureRuns: Recorded['failureRuns'] = new Map();
  let chain: Promise<void> = Promise.resolve();
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const batch = waiting.splice(0);
    if (batch.length === 0) return;
    chain = chain.then(async () => {
      const recorded = await recordAttempts(db, eventId, batch);
      status = recorded.status;
      for (const [webhookId, run] of recorded.failureRuns) failureRuns.set(webhookId, run);
    });
    chain.catch(() => undefined); // observed by `done`; a failed batch fails the activity, which is retried
  };
  return {
    add(r: AttemptRecord) {
      waiting.push(r);
      if (++arrived >= expected) flush();
      else timer ??= setTimeout(flush, GATHER_MS);
    },
    async done(): Promise<{ status: Recorded['status'] | undefined; failureRuns: Recorded['failureRuns'] }> {
      flush();
      await chain;
      return { status, failureRuns };
    },
  };
}

/** Events whose deliveries to a disabled webhook give up per transaction (each one's row is locked in it). */
const GIVE_UP_BATCH = 500;

/**
 * A webhook was disabled (410 Gone, or its failures sustained: activities/health.ts): its
 * deliveries still pending can no longer be delivered, so they give up now (`failed`) and
 * their events move to their final status at once, not when each one's next retry would
 * have come due — `GET /v2/events?status=failed` finds them then. In batches, each event
 * locked as an attempt being recorded locks it (status.ts), so a concurrent record waits
 * its turn; nothing moves them back (FORWARD_STATE keeps `failed` against a late failed
 * attempt, and the runs that wait for their retries stop at them: activities/deliver.ts),
 * until a replay or recovery. A webhook enabled again meanwhile is left alone. Returns the
 * number of events that became `failed`.
 */
export async function giveUpDeliveriesTo(db: Db, webhookId: string): Promise<number> {
  const stillOff = sql<boolean>`exists (select 1 from webhooks w where w.id = ${webhookId} and (w.disabled_at is not null or not ${notDeleted('w')}))`;
  let failed = 0;
  for (;;) {
    const batch = await db.transaction().execute(async (trx) => {
      const locked = await trx
        .selectFrom('events')
        .select('id')
        .where('id', 'in', (eb) => eb.selectFrom('event_deliveries').select('event_id').where('webhook_id', '=', webhookId).where('state', '=', 'pending'))
        .where(stillOff)
        .orderBy('id')
        .limit(GIVE_UP_BATCH)
        .forNoKeyUpdate()
        .execute();
      const ids = locked.map((e) => e.id);
      if (ids.length === 0) return { events: 0, failed: 0 };
      // One statement: its parts see the rows as they were, so the status is derived from
      // them with this webhook's pending delivery read as given up.
      const { rows } = await sql<{ id: string; status: EventStatus }>`
        with given_up as (
          update event_deliveries set state = 'failed', next_attempt_at = null, updated_at = now()
          where event_id = any(${ids}::text[]) and webhook_id = ${webhookId} and state = 'pending' and ${stillOff}
        ), status as (
          select e.id, ${eventStatusOf(sql`(select case when webhook_id = ${webhookId} and state = 'pending' then 'failed' else state end as state, attempts from event_deliveries where event_id = e.id)`)} as status
          from events e where e.id = any(${ids}::text[]) and ${stillOff}
        )
        update events e set status = s.status, updated_at = now()
        from status s where e.id = s.id and e.status <> s.status
        returning e.id, e.status`.execute(trx);
      return { events: ids.length, failed: rows.filter((r) => r.status === 'failed').length };
    });
    failed += batch.failed;
    if (batch.events < GIVE_UP_BATCH) return failed;
  }
}

/** One delivery of an event as its page shows it. */
export interface DeliveryProgress {
  webhook_id: string;
  /** Credentials masked. */
  url: string;
  state: DeliveryState;
  /** Attempts of its current run (a replay or recovery starts a new one at 0): the next one is number `attempts + 1`. */
  attempts: number;
  /** When the next attempt is planned; null unless a failed attempt left it pending. */
  next_attempt_at: string | null;
  /** From the attempt log, over every run: the attempts sent, those that failed, and the runs that sent any (the first delivery, then each replay or recovery). */
  sent: number;
  failed: number;
  runs: number;
}

/** An event's deliveries (one per webhook), scoped by the caller's user and mode, with its attempt log's totals. */
export async function deliveryProgress(db: Executor, who: Principal, eventId: string): Promise<DeliveryProgress[]> {
  const rows = await db
    .selectFrom('event_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    // Payloads are partitioned by creation time and made after their event (and its id).
    .leftJoin(
      (eb) =>
        eb
          .selectFrom('payloads')
          .select(['webhook_id', sql<number>`count(*)::int`.as('sent'), sql<number>`(count(*) filter (where not ${acknowledgedSql()}))::int`.as('failed'), sql<number>`(count(*) filter (where attempt = 1))::int`.as('runs')])
          .where('event_id', '=', eventId)
          .where('created_at', '>=', idTime(eventId))
          .groupBy('webhook_id')
          .as('p'),
      (join) => join.onRef('p.webhook_id', '=', 'd.webhook_id'),
    )
    .select(['d.webhook_id', 'd.url', 'd.state', 'd.attempts', 'd.next_attempt_at', 'p.sent', 'p.failed', 'p.runs'])
    .where('d.event_id', '=', eventId)
    .where(ownedBy(who, { table: 'e' }))
    .orderBy('d.webhook_id')
    .execute();
  return rows.map(({ sent, failed, runs, ...r }) => ({
    ...r,
    url: redactUrl(r.url),
    next_attempt_at: r.state === 'pending' && r.next_attempt_at ? isoSeconds(r.next_attempt_at) : null,
    sent: sent ?? 0,
    failed: failed ?? 0,
    // Payloads from before their number was kept count as one run.
    runs: Math.max(runs ?? 0, sent ? 1 : 0),
  }));
}
