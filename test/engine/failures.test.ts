import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStatus, publish, webhook, untilDisabled } from '../support/events';
import { call, createAccount } from '../support/http';
import { eventually, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

// Test timings (test/support/test-config.ts): retries after 300, 600, 900 ms (4 attempts),
// 1.5 s per attempt, webhook disabled after 4 consecutive failures spanning ≥ 1 s.
let sys: TestSystem;

beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

describe('failed attempts', () => {
  it('500 then 200 → retrying, then completed with two Payloads', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver((_d, i, res) => { res.writeHead(i === 0 ? 500 : 200).end(i === 0 ? 'boom' : 'ok'); });
    await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test');
    await receiver.waitFor(1);
    await eventStatus(sys, acct.testKey, event.id, 'retrying', 5000);
    await receiver.waitFor(2);
    await eventStatus(sys, acct.testKey, event.id, 'completed');
    const payloads = (await call(sys, 'GET', `/events/${event.id}/payloads`, { key: acct.testKey })).body.payloads;
    expect(payloads.map((p: any) => p.response_code).sort()).toEqual([200, 500]);
    expect(payloads.find((p: any) => p.response_code === 500).response_body).toBe('boom');
    expect(receiver.deliveries[1]!.json.id).toBe(event.id);
    await receiver.close();
  });

  it('a failure counted by the statement that records a later attempt tells the health workflow when it reaches the threshold', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver(status(500));
    const hook = await webhook(sys, acct.testKey, receiver.url);
    // A run two failures long, started a minute ago: attempt 1 makes it 3 (counted after its
    // transaction), attempt 2 makes it 4 — the tests' threshold (test/support/test-config.ts) —
    // counted inside the statement that records it (event-deliveries.ts). Attempts 3 and 4
    // would make it 5 and 6, which tell nothing: only that run can get the webhook disabled.
    await sys.db.updateTable('webhooks').set({ consecutive_failures: 2, failing_since: new Date(Date.now() - 60_000) }).where('id', '=', hook.id).execute();
    await publish(sys, acct.user.id, 'test');
    const disabled = await untilDisabled(sys, acct.testKey, hook.id, 15_000);
    expect(disabled.disabled_at).toMatch(/Z$/);
    expect(receiver.deliveries.length).toBeGreaterThanOrEqual(2);
    await receiver.close();
  });

  it('always 500 → failed, the webhook disabled by its health workflow; PATCH re-enables', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver(status(500));
    const hook = await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test');
    const failed = await eventStatus(sys, acct.testKey, event.id, 'failed', 15_000);
    expect(failed.pending_urls).toEqual([receiver.url]);
    expect(receiver.deliveries).toHaveLength(4);
    const disabled = await untilDisabled(sys, acct.testKey, hook.id, 10_000);
    expect(disabled.disabled_at).toMatch(/Z$/);
    // A disabled webhook is not part of new events.
    const later = await publish(sys, acct.user.id, 'test');
    expect(later.pending_urls).toEqual([]);
    const patched = await call(sys, 'PATCH', `/webhooks/${hook.id}`, { key: acct.testKey, body: {} });
    expect(patched.body.disabled_at).toBeNull();
    receiver.answer(status(200));
    const next = await publish(sys, acct.user.id, 'test');
    await eventStatus(sys, acct.testKey, next.id, 'completed');
    await receiver.close();
  });

  it('a receiver that never answers times out (response code 0)', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver(() => { /* never answers */ });
    await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test');
    await receiver.waitFor(1);
    const payload = await eventually(async () => {
      const res = await call(sys, 'GET', `/events/${event.id}/payloads`, { key: acct.testKey });
      return res.body.payloads[0];
    }, 10_000, 'the first payload');
    expect(payload.response_code).toBe(0);
    expect(payload.response_body).toMatch(/timed out/);
    expect(payload.total_time).toBeGreaterThanOrEqual(1400);
    await receiver.close();
  });

  it('a 302 is a failure and is not followed', async () => {
    const acct = await createAccount(sys);
    const target = await startReceiver();
    const receiver = await startReceiver((_d, i, res) => {
      if (i === 0) res.writeHead(302, { location: target.url }).end();
      else res.writeHead(200).end('ok');
    });
    await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test');
    await eventStatus(sys, acct.testKey, event.id, 'completed');
    const codes = (await call(sys, 'GET', `/events/${event.id}/payloads`, { key: acct.testKey })).body.payloads.map((p: any) => p.response_code);
    expect(codes.sort()).toEqual([200, 302]);
    expect(target.deliveries).toHaveLength(0);
    await Promise.all([target.close(), receiver.close()]);
  });

  it('410 Gone disables the webhook at once and fails the event', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver(status(410));
    const hook = await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test');
    await eventStatus(sys, acct.testKey, event.id, 'failed');
    // Disabled by the attempt's follow-up, a moment after the status is recorded.
    await untilDisabled(sys, acct.testKey, hook.id, 5_000);
    expect(receiver.deliveries).toHaveLength(1);
    await receiver.close();
  });

  it('a deleted webhook gets no further attempts', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver(status(503));
    const hook = await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test');
    await receiver.waitFor(1);
    await call(sys, 'DELETE', `/webhooks/${hook.id}`, { key: acct.testKey });
    await eventStatus(sys, acct.testKey, event.id, 'failed');
    await new Promise((r) => setTimeout(r, 1000));
    expect(receiver.deliveries.length).toBeLessThanOrEqual(2);
    await receiver.close();
  });

  it('a Retry-After on 503 longer than the planned delay is honoured', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver((_d, i, res) => {
      if (i === 0) res.writeHead(503, { 'retry-after': '2' }).end();
      else res.writeHead(200).end('ok');
    });
    await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test');
    const [first, second] = await receiver.waitFor(2, 15_000);
    // The planned wait is 300 ms ± 20%; the receiver asked for 2 s.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1900);
    await eventStatus(sys, acct.testKey, event.id, 'completed');
    await receiver.close();
  });
});
