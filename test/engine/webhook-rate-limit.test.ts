import type { Client } from '@temporalio/client';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStatus, publish, webhook } from '../support/events';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { eventually, type Receiver, startReceiver } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';
import { currentDetails, mostInWindow, portalSession, timerSummaries } from './pauses';

/**
 * A webhook's `rate_limit` (deliveries per second), on the suite's worker: the field through
 * the API and the portal, the limit held, a held delivery delayed rather than failed and
 * visible as waiting, and the other webhooks of the same events not slowed.
 */
let sys: TestSystem;
let client: Client;
let acct: Account;
const receivers: Receiver[] = [];

beforeAll(async () => {
  sys = await startSystem();
  client = await sys.temporal();
  acct = await createAccount(sys);
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await sys.close();
});

async function receiver() {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

describe('rate_limit and ordering on the Webhook', () => {
  it('are taken on create (wrapped) and update (top-level or wrapped), returned, cleared by null, and refused out of range', async () => {
    const created = await call(sys, 'POST', '/webhooks', { key: acct.testKey, body: { webhook: { url: 'https://example.com/limited', rate_limit: 10, ordering: 'per_object' } } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ rate_limit: 10, ordering: 'per_object' });
    const id = created.body.id as string;
    expect((await call(sys, 'GET', `/webhooks/${id}`, { key: acct.testKey })).body).toMatchObject({ rate_limit: 10, ordering: 'per_object' });

    const top = await call(sys, 'PATCH', `/webhooks/${id}`, { key: acct.testKey, body: { rate_limit: 1000 } });
    expect(top.status).toBe(201);
    expect(top.body).toMatchObject({ rate_limit: 1000, ordering: 'per_object' }); // left out: unchanged
    const wrapped = await call(sys, 'PATCH', `/webhooks/${id}`, { key: acct.testKey, body: { webhook: { rate_limit: null, ordering: 'none' } } });
    expect(wrapped.body).toMatchObject({ rate_limit: null, ordering: 'none' });
    const plain = await call(sys, 'POST', '/webhooks', { key: acct.testKey, body: { webhook: { url: 'https://example.com/plain' } } });
    expect(plain.body).toMatchObject({ rate_limit: null, ordering: 'none' });

    for (const [body, field] of [
      [{ webhook: { url: 'https://example.com/x', rate_limit: 0 } }, 'webhook.rate_limit'],
      [{ webhook: { url: 'https://example.com/x', rate_limit: 1001 } }, 'webhook.rate_limit'],
      [{ webhook: { url: 'https://example.com/x', rate_limit: 2.5 } }, 'webhook.rate_limit'],
      [{ webhook: { url: 'https://example.com/x', rate_limit: '10' } }, 'webhook.rate_limit'],
      [{ webhook: { url: 'https://example.com/x', ordering: 'fifo' } }, 'webhook.ordering'],
    ] as const) {
      const refused = await call(sys, 'POST', '/webhooks', { key: acct.testKey, body });
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(errorOf(refused)).toMatchObject({ code: 'WEBHOOK.INVALID', errors: [expect.objectContaining({ field })] });
    }
    const badUpdate = await call(sys, 'PATCH', `/webhooks/${id}`, { key: acct.testKey, body: { ordering: null } });
    expect(badUpdate.status).toBe(422);
    expect(errorOf(badUpdate).errors).toEqual([expect.objectContaining({ field: 'ordering' })]);
    // Only a rate limit: a known field, so not refused as "changes nothing".
    expect((await call(sys, 'PATCH', `/webhooks/${id}`, { key: acct.testKey, body: { rate_limit: 5 } })).body.rate_limit).toBe(5);

    const doc = (await fetch(`${sys.baseUrl}/openapi.json`).then((r) => r.json())) as any;
    const props = doc.components.schemas.Webhook.properties;
    expect(props.rate_limit).toBeDefined();
    expect(props.ordering.enum).toEqual(['none', 'per_object']);
    expect(doc.components.schemas.WebhookCreate.properties.rate_limit).toMatchObject({ minimum: 1, maximum: 1000 });
  });

  it('are shown and edited in the portal', async () => {
    const own = await createAccount(sys);
    const portal = await portalSession(sys, own.testKey);
    const added = await portal.post('/portal/webhooks', { url: 'https://example.com/from-portal', rate_limit: '20', ordering: 'per_object', event_types_scope: 'all', _idempotency_key: crypto.randomUUID() });
    expect(added.status).toBe(303);
    const id = /hook_[0-9a-f]{32}/.exec(added.location!)![0];
    expect((await call(sys, 'GET', `/webhooks/${id}`, { key: own.testKey })).body).toMatchObject({ rate_limit: 20, ordering: 'per_object' });
    const page = await portal.get(`/portal/webhooks/${id}`);
    expect(page).toContain('At most 20 deliveries per second');
    expect(page).toMatch(/name="rate_limit"[^>]*value="20"/);
    expect(page).toMatch(/value="per_object" checked/);

    const cleared = await portal.post(`/portal/webhooks/${id}`, { rate_limit: '', ordering: 'none', event_types_scope: 'all', _idempotency_key: crypto.randomUUID() });
    expect(cleared.status).toBe(303);
    expect((await call(sys, 'GET', `/webhooks/${id}`, { key: own.testKey })).body).toMatchObject({ rate_limit: null, ordering: 'none' });
    const refused = await portal.post(`/portal/webhooks/${id}`, { rate_limit: '5000', ordering: 'none', event_types_scope: 'all', _idempotency_key: crypto.randomUUID() });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain('from 1 to 1000');
  });
});

describe('a rate-limited webhook', () => {
  it('never gets more than its limit in a second, gets every event with attempt 1 and no failure counted, and does not slow the event’s other webhooks', async () => {
    const own = await createAccount(sys);
    const [limited, free] = [await receiver(), await receiver()];
    const hook = await webhook(sys, own.testKey, limited.url, { rate_limit: 5 });
    await webhook(sys, own.testKey, free.url);
    const events = await Promise.all(Array.from({ length: 15 }, () => publish(sys, own.user.id, 'test')));

    await limited.waitFor(15, 30_000);
    await free.waitFor(15);
    const times = limited.deliveries.map((d) => d.at);
    // A spacing of 200 ms between slots: at most 5 in a second, and one sent a little late.
    expect(mostInWindow(times), `arrivals ${times.map((t) => t - times[0]!).join(',')}`).toBeLessThanOrEqual(6);
    expect(new Set(limited.deliveries.map((d) => d.json.id))).toEqual(new Set(events.map((e) => e.id)));
    // Held, not failed: every event's one request is its attempt 1.
    expect(limited.deliveries.map((d) => d.headers['x-shiphook-attempt'])).toEqual(Array(15).fill('1'));
    // The other webhook got all of them while the limited one was still being paced.
    const freeDone = Math.max(...free.deliveries.map((d) => d.at));
    expect(freeDone).toBeLessThan([...times].sort((a, b) => a - b)[9]!);

    for (const e of events) await eventStatus(sys, own.testKey, e.id, 'completed');
    const health = (await call(sys, 'GET', `/webhooks/${hook.id}/health`, { key: own.testKey })).body;
    expect(health).toMatchObject({ status: 'healthy', consecutive_failures: 0, last_24h: { attempts: 15, failed: 0 } });
    // Nothing still says it waits.
    const rows = await sys.db.selectFrom('event_deliveries').select('waiting_for').where('webhook_id', '=', hook.id).execute();
    expect(rows.map((r) => r.waiting_for)).toEqual(Array(15).fill(null));
  });

  it('holds a delivery again when the sends already queued reach too far ahead, says so on its row, and sends it later as attempt 1', async () => {
    const own = await createAccount(sys);
    const limited = await receiver();
    const hook = await webhook(sys, own.testKey, limited.url, { rate_limit: 1 });
    // Send times taken up to 6 s from now (workers far behind their slots): its slot is now, but no send time it could go at is.
    await sql`insert into webhook_rate_slots (webhook_id, next_at, sent_at) values (${hook.id}, now(), now() + interval '6 seconds')`.execute(sys.db);
    const event = await publish(sys, own.user.id, 'test');
    const row = () => sys.db.selectFrom('event_deliveries').select(['waiting_for', 'next_attempt_at']).where('event_id', '=', event.id).executeTakeFirstOrThrow();
    const held = await eventually(async () => ((await row()).waiting_for === 'rate_limit' ? row() : undefined), 20_000, 'the delivery to be held again');
    expect(held.next_attempt_at!.getTime()).toBeGreaterThan(Date.now());
    expect(limited.deliveries).toHaveLength(0);

    await limited.waitFor(1, 30_000);
    expect(limited.deliveries[0]!.headers['x-shiphook-attempt']).toBe('1');
    await eventStatus(sys, own.testKey, event.id, 'completed');
    expect((await row()).waiting_for).toBeNull();
  });

  it('shows a held delivery as waiting for the rate limit: in the run’s timer and current details, and on the portal’s event page', async () => {
    const own = await createAccount(sys);
    const limited = await receiver();
    await webhook(sys, own.testKey, limited.url, { rate_limit: 1 });
    // One a second: the fourth event's slot is about 3 s away, so its run holds it on a timer.
    const events = [];
    for (let i = 0; i < 4; i++) events.push(await publish(sys, own.user.id, 'test'));
    const last = events.at(-1)!;
    const details = await eventually(async () => {
      const d = await currentDetails(client, last.id).catch(() => '');
      return d.includes('rate limit') ? d : undefined;
    }, 20_000, 'the run to say it waits for the rate limit');
    expect(details).toMatch(/waits for the rate limit of http:\/\/127\.0\.0\.1:\d+\/hook \(1\/s\): its slot is at \d{4}-/);
    expect(await timerSummaries(client, last.id)).toEqual([expect.stringMatching(/^waits for the rate limit of .* \(1\/s\)/)]);
    const portal = await portalSession(sys, own.testKey);
    expect(await portal.get(`/portal/events/${last.id}`)).toContain("waits for the webhook's rate limit");

    await limited.waitFor(4, 20_000);
    await eventStatus(sys, own.testKey, last.id, 'completed');
    expect(await portal.get(`/portal/events/${last.id}`)).not.toContain('waits for');
    expect(await currentDetails(client, last.id).catch(() => '')).toBe('');
  });
});
