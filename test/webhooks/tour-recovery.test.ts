import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createAccount } from '../support/http';
import { eventually, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

/**
 * The README tour's step 7, request for request against the suite's server, and what its
 * comments promise: a receiver answering 410 Gone disables its webhook at once; events
 * published while it is disabled are sent nowhere (no retry could deliver them); once
 * re-enabled, recovering since a time delivers exactly those, whatever the timing.
 */
let sys: TestSystem;

beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

describe("the tour's recovery step", () => {
  it('410 disables the webhook, the events published meanwhile go nowhere, and recover since then delivers exactly those', async () => {
    const acct = await createAccount(sys);
    const key = acct.testKey;
    // Steps 1–2: the receiver, here answering as `FAIL=410` makes it; the tour's webhook.
    const receiver = await startReceiver(status(410));
    const created = await call(sys, 'POST', '/webhooks', { key, body: { webhook: { url: receiver.url, webhook_secret: 's3cret-for-the-tour', event_types: ['tracker.*', 'batch.*'] } } });
    const hook = created.body.id as string;

    // A test event meets the 410: the webhook is disabled at once.
    expect((await call(sys, 'POST', `/webhooks/${hook}/test`, { key })).status).toBe(201);
    const health = await eventually(async () => {
      const h = (await call(sys, 'GET', `/webhooks/${hook}/health`, { key })).body;
      return h.disabled_reason ? h : undefined;
    }, 10_000, 'the webhook to be disabled');
    expect(health.disabled_reason).toBe('endpoint_gone');
    // `sleep 1` before, `date -u +%Y-%m-%dT%H:%M:%SZ` and `sleep 1`: a whole second after the
    // test event (which must not be recovered), and the events are published after it.
    const sinceMs = Math.ceil((Date.now() + 1) / 1000) * 1000;
    await eventually(async () => (Date.now() >= sinceMs ? true : undefined), 5_000, 'the next whole second');
    const since = new Date(sinceMs).toISOString().replace('.000Z', 'Z');

    // Three events, as `npx shiphook trigger tracker.updated` publishes them.
    const published: string[] = [];
    for (const _ of [1, 2, 3]) {
      const res = await call(sys, 'POST', '/events/trigger', { key, body: { description: 'tracker.updated' } });
      expect(res.status).toBe(201);
      published.push(res.body.id);
    }
    // "completed ×3: nothing to deliver them to".
    const listed = (await call(sys, 'GET', '/events?page_size=3', { key })).body.events as { id: string; status: string }[];
    expect(listed.map((e) => [e.id, e.status])).toEqual([...published].reverse().map((id) => [id, 'completed']));
    expect(receiver.deliveries).toHaveLength(1); // the test event's 410 only

    // The receiver healthy again, the webhook re-enabled by an empty update, then the recovery.
    receiver.answer(status(200));
    expect((await call(sys, 'PATCH', `/webhooks/${hook}`, { key, body: {} })).status).toBe(201);
    const recovery = await call(sys, 'POST', `/webhooks/${hook}/recover`, { key, body: { since } });
    expect(recovery.status).toBe(202);
    // `"status":"done","matched":3,…,"undelivered":0`
    const done = await eventually(async () => {
      const p = (await call(sys, 'GET', `/recoveries/${recovery.body.id}`, { key })).body;
      return p.status === 'done' && p.undelivered === 0 ? p : undefined;
    }, 20_000, 'the recovery to deliver what was missed');
    expect(done).toMatchObject({ status: 'done', matched: 3, undelivered: 0 });
    await receiver.waitFor(4);
    expect(receiver.deliveries.slice(1).map((d) => d.json?.id).sort()).toEqual([...published].sort());
    await receiver.close();
  });
});
