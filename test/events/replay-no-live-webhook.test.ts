import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStatus, publish, webhook, untilDisabled } from '../support/events';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { eventually, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';
import { TEST_ENV } from '../support/test-config';

// A replay with no live webhook to deliver to says so (422) instead of answering `in_queue`
// and falling back to `failed`; and it changes nothing.
let sys: TestSystem;
const ADMIN = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };

beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

/** What a replay could change: the event's row and its delivery rows. */
const snapshot = async (eventId: string) => ({
  event: await sys.db.selectFrom('events').select(['status', 'updated_at', 'dispatched_at', 'replay_id']).where('id', '=', eventId).executeTakeFirstOrThrow(),
  deliveries: await sys.db.selectFrom('event_deliveries').select(['webhook_id', 'state', 'attempts', 'updated_at']).where('event_id', '=', eventId).orderBy('webhook_id').execute(),
});

/** An account whose one webhook answered 410 Gone (so it is disabled) to an event that is now failed. */
async function goneEvent(): Promise<{ a: Account; hookId: string; eventId: string; sent: () => number }> {
  const a = await createAccount(sys);
  const receiver = await startReceiver(status(410));
  const hook = await webhook(sys, a.testKey, receiver.url);
  const event = await publish(sys, a.user.id, 'test');
  await eventStatus(sys, a.testKey, event.id, 'failed', 30_000);
  await untilDisabled(sys, a.testKey, hook.id, 10_000);
  afterAll(() => receiver.close());
  return { a, hookId: hook.id, eventId: event.id, sent: () => receiver.deliveries.length };
}

describe('replaying an event whose only undelivered URL is dead', () => {
  it('a disabled webhook: 422, nothing changes, nothing is sent; re-enabled, the same replay delivers', async () => {
    const { a, hookId, eventId, sent } = await goneEvent();
    const before = await snapshot(eventId);
    const sentBefore = sent();
    const res = await call(sys, 'POST', `/events/${eventId}/replay`, { key: a.testKey });
    expect(res.status).toBe(422);
    expect(errorOf(res)).toMatchObject({ code: 'WEBHOOK.INVALID', message: expect.stringMatching(/^No live webhook to deliver to: .*deleted or disabled webhooks/) });
    const all = await call(sys, 'POST', `/events/${eventId}/replay`, { key: a.testKey, body: { all: true } });
    expect(all.status).toBe(422);
    expect(errorOf(all).message).toMatch(/no webhook of this account and mode is enabled/);
    expect(await snapshot(eventId)).toEqual(before);
    expect((await call(sys, 'GET', `/events/${eventId}`, { key: a.testKey })).body.status).toBe('failed');
    expect(sent()).toBe(sentBefore);

    // The refusal is about the target, not the event: once re-enabled, the same replay goes out.
    expect((await call(sys, 'PATCH', `/webhooks/${hookId}`, { key: a.testKey, body: {} })).status).toBe(201);
    const ok = await call(sys, 'POST', `/events/${eventId}/replay`, { key: a.testKey });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('in_queue');
    await eventually(async () => (sent() > sentBefore ? true : undefined), 20_000, 'the replayed delivery');
  });

  it('a deleted webhook: the same refusal', async () => {
    const { a, hookId, eventId, sent } = await goneEvent();
    expect((await call(sys, 'DELETE', `/webhooks/${hookId}`, { key: a.testKey })).status).toBe(200);
    const before = await snapshot(eventId);
    const sentBefore = sent();
    const res = await call(sys, 'POST', `/events/${eventId}/replay`, { key: a.testKey });
    expect(res.status).toBe(422);
    expect(errorOf(res).code).toBe('WEBHOOK.INVALID');
    expect(await snapshot(eventId)).toEqual(before);
    expect(sent()).toBe(sentBefore);
  });

  it('the operator\'s broad replay: refused when every matched event is dead, and leaves dead ones out of a mixed match', async () => {
    const { a, eventId } = await goneEvent();
    const before = await snapshot(eventId);
    const replaysBefore = (await sys.db.selectFrom('replays').select('id').execute()).length;
    const res = await call(sys, 'POST', '/admin/v1/events/replay', { headers: ADMIN, body: { user_id: a.user.id } });
    expect(res.status).toBe(422);
    expect(errorOf(res)).toMatchObject({ code: 'WEBHOOK.INVALID', message: expect.stringContaining('every event the filter matches has its undelivered URLs on deleted or disabled webhooks') });
    expect(await snapshot(eventId)).toEqual(before);
    expect((await sys.db.selectFrom('replays').select('id').execute()).length).toBe(replaysBefore);

    // A second webhook, live, and an event that failed on it: only that one is taken.
    const flaky = await startReceiver(status(500));
    const flakyHook = await webhook(sys, a.testKey, flaky.url);
    const live = await publish(sys, a.user.id, 'test');
    await eventStatus(sys, a.testKey, live.id, 'failed', 30_000);
    // Its failures disable it too: re-enabled, as its owner would.
    await untilDisabled(sys, a.testKey, flakyHook.id, 10_000);
    expect((await call(sys, 'PATCH', `/webhooks/${flakyHook.id}`, { key: a.testKey, body: {} })).status).toBe(201);
    flaky.answer(status(200));
    const flakyBefore = flaky.deliveries.length;
    const mixed = await call(sys, 'POST', '/admin/v1/events/replay', { headers: ADMIN, body: { user_id: a.user.id, status: 'failed' } });
    expect(mixed.status).toBe(202);
    expect(mixed.body.matched).toBe(1);
    await eventually(async () => ((await call(sys, 'GET', `/admin/v1/replays/${mixed.body.id}`, { headers: ADMIN })).body.status === 'done' ? true : undefined), 20_000, 'the replay to be done');
    await eventStatus(sys, a.testKey, live.id, 'completed');
    expect(flaky.deliveries.slice(flakyBefore).map((d) => d.json.id)).toEqual([live.id]);
    expect((await snapshot(eventId)).deliveries).toEqual(before.deliveries);
    await flaky.close();
  });
});
