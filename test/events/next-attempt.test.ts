import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AttemptRecord, deliveryProgress, recordAttempts } from '../../src/events/deliveries';
import type { DeliveryState } from '../../src/events/tables';
import { newId } from '../../src/ids';
import { createAccount } from '../support/http';
import { startSystem, type TestSystem } from '../support/system';

/**
 * A pending delivery's next attempt time (event_deliveries.next_attempt_at) is written
 * by the statement that records the failed attempt planning it — under the event's
 * lock for a first attempt, in the one lock-free statement for a later one — and
 * cleared by the attempt that delivers or gives up. Rows read back from PostgreSQL.
 */
let sys: TestSystem;
beforeAll(async () => {
  sys = await startSystem();
});
afterAll(async () => {
  await sys.close();
});

/** An already dispatched event of a fresh account with two webhooks: no worker touches its rows. */
async function eventWithTwoHooks() {
  const acct = await createAccount(sys);
  const hookIds = [newId('hook'), newId('hook')].sort();
  await sys.db.insertInto('webhooks').values(hookIds.map((id, i) => ({ id, user_id: acct.user.id, mode: 'test' as const, url: `https://user:pw@example.test/${i}` }))).execute();
  const eventId = newId('evt');
  await sys.db.insertInto('events').values({ id: eventId, user_id: acct.user.id, mode: 'test', description: 'tracker.updated', status: 'in_queue', result: '{}', previous_attributes: '{}', test: false, dispatched_at: new Date() }).execute();
  await sys.db.insertInto('event_deliveries').values(hookIds.map((id, i) => ({ event_id: eventId, webhook_id: id, url: `https://user:pw@example.test/${i}` }))).execute();
  return { eventId, hookIds: hookIds as [string, string], acct };
}

const record = (eventId: string, webhookId: string, attemptsBefore: number, state: DeliveryState, nextAttemptAt?: Date): AttemptRecord => ({
  webhookId,
  before: { state: 'pending', attempts: attemptsBefore },
  state,
  ...(nextAttemptAt ? { nextAttemptAt } : {}),
  payload: { id: newId('payload'), attempt: attemptsBefore + 1, eventId, webhookId, requestUrl: 'https://example.test/', requestHeaders: {}, requestBody: '{}', responseCode: state === 'completed' ? 200 : 500, responseHeaders: {}, responseBody: '', totalTime: 5 },
});

const nextOf = async (eventId: string) =>
  (await sys.db.selectFrom('event_deliveries').select(['webhook_id', 'attempts', 'next_attempt_at']).where('event_id', '=', eventId).orderBy('webhook_id').execute()).map((d) => [d.attempts, d.next_attempt_at?.getTime() ?? null]);

describe('next attempt time', () => {
  it('is set by the failed attempt that plans it, per webhook, on both recording paths, and cleared by success or give-up', async () => {
    const { eventId, hookIds: [a, b] } = await eventWithTwoHooks();
    const t = (s: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, s));

    // Attempt 1 (under the event's lock): one fails with a retry planned, one delivers.
    await recordAttempts(sys.db, eventId, [record(eventId, a, 0, 'pending', t(10)), record(eventId, b, 0, 'completed')]);
    expect(await nextOf(eventId)).toEqual([[1, t(10).getTime()], [1, null]]);

    // Later failures of several webhooks in one batch (the lock-free statement): each gets its own time.
    await sys.db.updateTable('event_deliveries').set({ state: 'pending' }).where('event_id', '=', eventId).execute();
    await recordAttempts(sys.db, eventId, [record(eventId, b, 1, 'pending', t(40)), record(eventId, a, 1, 'pending', t(30))]);
    expect(await nextOf(eventId)).toEqual([[2, t(30).getTime()], [2, t(40).getTime()]]);

    // The page reads it, scoped and masked; the owner of another account sees nothing.
    const { acct } = await eventWithTwoHooks();
    const owner = (await sys.db.selectFrom('events').select('user_id').where('id', '=', eventId).executeTakeFirstOrThrow()).user_id;
    const user = await sys.db.selectFrom('users').selectAll().where('id', '=', owner).executeTakeFirstOrThrow();
    const shown = await deliveryProgress(sys.db, { user, mode: 'test', keyId: 'key_x' }, eventId);
    expect(shown.map((d) => [d.url, d.attempts, d.next_attempt_at])).toEqual([
      [expect.not.stringContaining('pw'), 2, '2030-01-01T00:00:30Z'],
      [expect.not.stringContaining('pw'), 2, '2030-01-01T00:00:40Z'],
    ]);
    expect(await deliveryProgress(sys.db, { user, mode: 'production', keyId: 'key_x' }, eventId)).toEqual([]);
    expect(await deliveryProgress(sys.db, { user: acct.user, mode: 'test', keyId: 'key_x' }, eventId)).toEqual([]);

    // One delivers, the other gives up: neither has a next attempt any more.
    await recordAttempts(sys.db, eventId, [record(eventId, a, 2, 'completed'), record(eventId, b, 2, 'failed')]);
    expect(await nextOf(eventId)).toEqual([[3, null], [3, null]]);
  });
});
