import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplay } from '../../src/engine/replay';
import type { DeliveryState } from '../../src/events/tables';
import { loadAttempt } from '../../activities/deliver';
import { type AttemptRecord, recordAttempts } from '../../src/events/deliveries';
import { eventStatusOf } from '../../src/events/status';
import { newId } from '../../src/ids';
import { createAccount } from '../support/http';
import { isolatedSystem } from '../support/isolated';
import { startSystem, type TestSystem } from '../support/system';

// recordAttempts writes Payloads, delivery rows and the event status in one statement
// after taking the event's lock; these tests read the rows back from PostgreSQL.
let sys: TestSystem;

beforeAll(async () => {
  sys = await startSystem();
});
afterAll(async () => {
  await sys.close();
});

/**
 * An event of a fresh account with `n` webhooks, written straight to the database
 * as already dispatched: no dispatcher of the running workers starts a workflow for
 * it, so this test is the only writer of its rows.
 */
async function eventWith(n: number, on: TestSystem = sys) {
  const acct = await createAccount(on);
  const hookIds = Array.from({ length: n }, () => newId('hook')).sort();
  if (n > 0) {
    await on.db
      .insertInto('webhooks')
      .values(hookIds.map((id, i) => ({ id, user_id: acct.user.id, mode: 'test' as const, url: `https://example.test/${i}` })))
      .execute();
  }
  const eventId = newId('evt');
  await on.db.transaction().execute(async (trx) => {
    await trx.insertInto('events').values({ id: eventId, user_id: acct.user.id, mode: 'test', description: 'tracker.updated', status: 'in_queue', result: '{}', previous_attributes: '{}', test: false, dispatched_at: new Date() }).execute();
    if (n > 0) await trx.insertInto('event_deliveries').values(hookIds.map((id, i) => ({ event_id: eventId, webhook_id: id, url: `https://example.test/${i}` }))).execute();
  });
  return { eventId, hookIds, userId: acct.user.id };
}

const attempt = (eventId: string, webhookId: string, attemptsBefore: number, state: DeliveryState, code: number): AttemptRecord => ({
  webhookId,
  before: { state: 'pending', attempts: attemptsBefore },
  state,
  payload: { id: newId('payload'), attempt: attemptsBefore + 1, eventId, webhookId, requestUrl: 'https://example.test/', requestHeaders: { 'content-type': 'application/json' }, requestBody: '{"a":"it\'s \\"quoted\\", {braced}"}', responseCode: code, responseHeaders: {}, responseBody: code === 200 ? 'ok' : 'nope', totalTime: 12 },
});

async function stored(eventId: string) {
  const event = await sys.db.selectFrom('events').select('status').where('id', '=', eventId).executeTakeFirstOrThrow();
  const deliveries = await sys.db.selectFrom('event_deliveries').select(['webhook_id', 'state', 'attempts']).where('event_id', '=', eventId).orderBy('webhook_id').execute();
  const payloads = await sys.db.selectFrom('payloads').select(['webhook_id', 'response_code', 'request_headers', 'request_body']).where('event_id', '=', eventId).orderBy('id').execute();
  return { status: event.status, deliveries, payloads };
}

describe('recording attempts moves the event status', () => {
  it('in_queue → retrying → failed, with every Payload and delivery row as recorded', async () => {
    const { eventId, hookIds: [a, b] } = await eventWith(2);
    expect((await stored(eventId)).status).toBe('in_queue');

    expect((await recordAttempts(sys.db, eventId, [attempt(eventId, a!, 0, 'completed', 200), attempt(eventId, b!, 0, 'pending', 500)])).status).toBe('retrying');
    let now = await stored(eventId);
    expect(now.status).toBe('retrying');
    expect(now.deliveries).toEqual([
      { webhook_id: a, state: 'completed', attempts: 1 },
      { webhook_id: b, state: 'pending', attempts: 1 },
    ]);
    expect(now.payloads).toHaveLength(2);
    expect(now.payloads[0]).toMatchObject({ request_headers: { 'content-type': 'application/json' }, request_body: '{"a":"it\'s \\"quoted\\", {braced}"}' });

    expect((await recordAttempts(sys.db, eventId, [{ ...attempt(eventId, b!, 1, 'failed', 500), before: { state: 'pending', attempts: 1 } }])).status).toBe('failed');
    now = await stored(eventId);
    expect(now.status).toBe('failed');
    expect(now.deliveries[1]).toEqual({ webhook_id: b, state: 'failed', attempts: 2 });
    expect(now.payloads.map((p) => p.response_code).sort()).toEqual([200, 500, 500]);
  });

  it('a delivery stopped without sending (webhook disabled) records no Payload and counts no attempt', async () => {
    const { eventId, hookIds: [a] } = await eventWith(1);
    expect((await recordAttempts(sys.db, eventId, [{ webhookId: a!, before: { state: 'pending', attempts: 0 }, state: 'failed' }])).status).toBe('failed');
    const now = await stored(eventId);
    expect(now).toEqual({ status: 'failed', deliveries: [{ webhook_id: a, state: 'failed', attempts: 0 }], payloads: [] });
  });

  it('a later attempt that failed is one statement that also counts the webhook’s failure and returns its run', async () => {
    const { eventId, hookIds: [a] } = await eventWith(1);
    const hook = () => sys.db.selectFrom('webhooks').select(['consecutive_failures', 'failing_since']).where('id', '=', a!).executeTakeFirstOrThrow();
    // Attempt 1 moves the status (under the event's lock) and leaves the counting to the caller.
    const first = await recordAttempts(sys.db, eventId, [attempt(eventId, a!, 0, 'pending', 500)]);
    expect(first).toEqual({ status: 'retrying', failureRuns: new Map() });
    expect(await hook()).toEqual({ consecutive_failures: 0, failing_since: null });

    const later = await recordAttempts(sys.db, eventId, [attempt(eventId, a!, 1, 'pending', 500)]);
    const counted = await hook();
    expect(counted.consecutive_failures).toBe(1);
    expect(counted.failing_since).toBeInstanceOf(Date);
    expect(later).toEqual({ status: 'retrying', failureRuns: new Map([[a!, { failingSince: counted.failing_since, consecutiveFailures: 1 }]]) });
    const now = await stored(eventId);
    expect(now.deliveries).toEqual([{ webhook_id: a, state: 'pending', attempts: 2 }]);
    expect(now.payloads).toHaveLength(2);

    // The run goes on: its start stays, the count grows.
    const again = await recordAttempts(sys.db, eventId, [attempt(eventId, a!, 2, 'pending', 500)]);
    expect(again.failureRuns.get(a!)).toEqual({ failingSince: counted.failing_since, consecutiveFailures: 2 });
  });

  it('concurrent attempts of one event take turns: the last to record sees the others’ rows', async () => {
    for (let round = 0; round < 5; round++) {
      const { eventId, hookIds } = await eventWith(4);
      const statuses = await Promise.all(hookIds.map(async (h) => (await recordAttempts(sys.db, eventId, [attempt(eventId, h, 0, 'completed', 200)])).status));
      // Exactly one of them recorded the last pending row, and saw the event complete.
      expect(statuses.filter((s) => s === 'completed')).toHaveLength(1);
      expect(statuses.filter((s) => s === 'in_queue')).toHaveLength(3);
      expect((await stored(eventId)).status).toBe('completed');
    }
  });
});

describe('a late record of an overlapping attempt never undoes a final state', () => {
  // Two attempts of one event overlap when a local activity outlives its workflow task
  // (the task timed out and its retry runs the activity again): the one that records
  // second found the delivery pending, like the first.
  it('completed stays completed, and the event with it, whatever a stale attempt recorded after it', async () => {
    const { eventId, hookIds: [a, b] } = await eventWith(2);
    await recordAttempts(sys.db, eventId, [attempt(eventId, a!, 0, 'completed', 200), attempt(eventId, b!, 0, 'completed', 200)]);
    expect((await stored(eventId)).status).toBe('completed');

    // The stale attempt failed (its POST was aborted) with retries left: first attempt, then a later one.
    const stale = { ...attempt(eventId, a!, 0, 'pending', 0), nextAttemptAt: new Date(Date.now() + 60_000) };
    expect((await recordAttempts(sys.db, eventId, [stale, attempt(eventId, b!, 0, 'failed', 0)])).status).toBe('completed');
    await recordAttempts(sys.db, eventId, [{ ...stale, before: { state: 'pending', attempts: 1 } }]);

    const now = await stored(eventId);
    expect(now.status).toBe('completed');
    // Every POST that was sent is recorded and counted; the states are the first records'.
    expect(now.deliveries).toEqual([
      { webhook_id: a, state: 'completed', attempts: 3 },
      { webhook_id: b, state: 'completed', attempts: 2 },
    ]);
    expect(now.payloads).toHaveLength(5);
    const planned = await sys.db.selectFrom('event_deliveries').select('next_attempt_at').where('event_id', '=', eventId).execute();
    expect(planned.map((r) => r.next_attempt_at)).toEqual([null, null]);
  });

  it('failed stays failed against a stale failure with retries left, and becomes completed when an overlapping attempt was acknowledged', async () => {
    const { eventId, hookIds: [a, b] } = await eventWith(2);
    await recordAttempts(sys.db, eventId, [{ ...attempt(eventId, a!, 3, 'failed', 500), before: { state: 'pending', attempts: 3 } }, { ...attempt(eventId, b!, 3, 'failed', 500), before: { state: 'pending', attempts: 3 } }]);
    expect((await stored(eventId)).status).toBe('failed');
    await recordAttempts(sys.db, eventId, [{ ...attempt(eventId, a!, 2, 'pending', 500), nextAttemptAt: new Date(Date.now() + 60_000) }, attempt(eventId, b!, 2, 'completed', 200)]);
    const now = await stored(eventId);
    expect(now.deliveries.map((d) => d.state)).toEqual(['failed', 'completed']);
    expect(now.status).toBe('failed');
  });
});

describe('loading an attempt: the event and its deliveries in one statement', () => {
  it('the event exactly as stored, each delivery with its webhook, and the URLs the body will show', async () => {
    const { eventId, hookIds: [a, b] } = await eventWith(2);
    await recordAttempts(sys.db, eventId, [attempt(eventId, a!, 0, 'completed', 200), attempt(eventId, b!, 0, 'pending', 500)]);
    const disabledAt = new Date();
    await sys.db.updateTable('webhooks').set({ disabled_at: disabledAt }).where('id', '=', b!).execute();

    const ctx = await loadAttempt(sys.db, eventId);
    // Nothing of the joined rows leaks into the event (its columns go into the delivered body).
    expect(ctx!.event).toEqual(await sys.db.selectFrom('events').selectAll().where('id', '=', eventId).executeTakeFirstOrThrow());
    expect([...ctx!.deliveries.keys()]).toEqual([a, b]);
    expect(ctx!.deliveries.get(a!)).toMatchObject({ webhookId: a, url: 'https://example.test/0', state: 'completed', attempts: 1, webhook: { disabledAt: null, deletedAt: null, previousSecret: null } });
    expect(ctx!.deliveries.get(b!)).toMatchObject({ webhookId: b, url: 'https://example.test/1', state: 'pending', attempts: 1, webhook: { disabledAt } });
    expect(ctx!.urls).toEqual({ pending_urls: ['https://example.test/1'], completed_urls: ['https://example.test/0'] });
  });

  it('an event without deliveries is found with none; an unknown event is not found', async () => {
    const { eventId } = await eventWith(0);
    const ctx = await loadAttempt(sys.db, eventId);
    expect(ctx!.event.id).toBe(eventId);
    expect(ctx!.deliveries.size).toBe(0);
    expect(ctx!.urls).toEqual({ pending_urls: [], completed_urls: [] });
    expect(await loadAttempt(sys.db, newId('evt'))).toBeUndefined();
  });
});

describe('one derivation of the event status, for recording and replay', () => {
  it('from any set of (state, attempts) rows', async () => {
    const statusOf = async (rows: [DeliveryState, number][]) => {
      const set = rows.length
        ? sql`(select * from (values ${sql.join(rows.map(([state, attempts]) => sql`(${state}::text, ${attempts}::int)`))}) as v(state, attempts))`
        : sql`(select 'pending'::text as state, 0 as attempts where false)`;
      return (await sql<{ status: string }>`select ${eventStatusOf(set)} as status`.execute(sys.db)).rows[0]!.status;
    };
    expect(await statusOf([])).toBe('completed');
    expect(await statusOf([['completed', 1], ['completed', 2]])).toBe('completed');
    expect(await statusOf([['failed', 4], ['completed', 1]])).toBe('failed');
    expect(await statusOf([['pending', 0], ['failed', 4]])).toBe('in_queue');
    expect(await statusOf([['pending', 0], ['completed', 1]])).toBe('in_queue');
    expect(await statusOf([['pending', 1], ['pending', 0]])).toBe('retrying');
  });

  it('a broad replay writes the status its rows say, even when it re-pends nothing', async () => {
    // A database of its own: no dispatcher starts the replayed event, and the trigger
    // below (which makes the replay's reset of the delivery rows change nothing) stays here.
    const iso = await isolatedSystem();
    try {
      const { eventId, hookIds: [a, b], userId } = await eventWith(2, iso.api);
      await recordAttempts(iso.api.db, eventId, [attempt(eventId, a!, 0, 'completed', 200), { ...attempt(eventId, b!, 3, 'failed', 500), before: { state: 'pending', attempts: 3 } }]);
      expect((await iso.api.db.selectFrom('events').select('status').where('id', '=', eventId).executeTakeFirstOrThrow()).status).toBe('failed');
      await sql`create function keep_deliveries() returns trigger language plpgsql as $$ begin return null; end $$`.execute(iso.api.db);
      await sql`create trigger keep_deliveries before update on event_deliveries for each row execute function keep_deliveries()`.execute(iso.api.db);
      expect(await startReplay(iso.api.db, { user_id: userId })).toMatchObject({ matched: 1 });
      const after = await iso.api.db.selectFrom('events').select(['status', 'replay_id']).where('id', '=', eventId).executeTakeFirstOrThrow();
      expect(after.replay_id).toMatch(/^replay_/);
      expect(after.status).toBe('failed');
    } finally {
      await iso.close();
    }
  });
});
