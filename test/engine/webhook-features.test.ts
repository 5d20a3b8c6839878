import EasyPostClient from '@easypost/api';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStatus, publish, webhook } from '../support/events';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { eventually, type Receiver, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;
let acct: Account;
const receivers: Receiver[] = [];
const easypost: any = new EasyPostClient('unused');
const GRACE_MS = 3000;

beforeAll(async () => {
  sys = await startSystem({ secretRotationGraceMs: GRACE_MS });
  acct = await createAccount(sys);
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await sys.close();
});

async function receiver(answer = status(200)) {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

/** A Standard Webhooks verifier for a shiphook secret that is not `whsec_…`: the key is its NFKD UTF-8 bytes. */
const verifierFor = (secret: string) => new Webhook(`whsec_${Buffer.from(secret.normalize('NFKD'), 'utf8').toString('base64')}`);
const headersOf = (d: { headers: Record<string, unknown> }) => d.headers as Record<string, string>;

describe('Standard Webhooks signatures', () => {
  it('signs webhook-id, webhook-timestamp and the body beside X-Hmac-Signature; a generated whsec_ secret verifies as it is', async () => {
    const [plain, generated] = [await receiver(), await receiver()];
    const a = await webhook(sys, acct.testKey, plain.url, { webhook_secret: 'sécret' });
    const b = await webhook(sys, acct.testKey, generated.url);
    const rotated = await call(sys, 'POST', `/webhooks/${b.id}/rotate_secret`, { key: acct.testKey, body: {} });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ object: 'WebhookSecret', webhook_id: b.id, previous_secret_expires_at: null });
    expect(rotated.body.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    // The secret stays write-only on the Webhook itself.
    expect(JSON.stringify((await call(sys, 'GET', `/webhooks/${b.id}`, { key: acct.testKey })).body)).not.toContain(rotated.body.webhook_secret);

    const event = await publish(sys, acct.user.id, 'test');
    const [d1] = await plain.waitFor(1);
    const [d2] = await generated.waitFor(1);
    for (const d of [d1!, d2!]) {
      expect(d.headers['webhook-id']).toBe(event.id);
      expect(Number(d.headers['webhook-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 60);
    }
    expect(verifierFor('sécret').verify(d1!.body.toString(), headersOf(d1!))).toMatchObject({ id: event.id });
    expect(new Webhook(rotated.body.webhook_secret).verify(d2!.body.toString(), headersOf(d2!))).toMatchObject({ id: event.id });
    // The seed's signature is still there, and the official client still accepts it.
    expect(easypost.Utils.validateWebhook(d1!.body, d1!.headers, 'sécret').id).toBe(event.id);
    expect(() => verifierFor('secret').verify(d1!.body.toString(), headersOf(d1!))).toThrow();
    expect(() => verifierFor('sécret').verify(d1!.body.toString().replace('in_transit', 'delivered'), headersOf(d1!))).toThrow();
    await eventStatus(sys, acct.testKey, event.id, 'completed');
    for (const h of [a, b]) await call(sys, 'DELETE', `/webhooks/${h.id}`, { key: acct.testKey });
  });

  it('rotation keeps the previous secret signing beside the new one for the grace period, then only the new one', async () => {
    const own = await createAccount(sys);
    const r = await receiver();
    const hook = await webhook(sys, own.testKey, r.url, { webhook_secret: 'old-secret' });
    const rotated = await call(sys, 'POST', `/webhooks/${hook.id}/rotate_secret`, { key: own.testKey, body: { webhook_secret: 'new-secret' } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.webhook_secret).toBe('new-secret');
    const expires = Date.parse(rotated.body.previous_secret_expires_at);
    expect(expires).toBeGreaterThan(Date.now());

    const during = await publish(sys, own.user.id, 'test');
    const [d] = await r.waitFor(1);
    expect(String(d!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifierFor('new-secret').verify(d!.body.toString(), headersOf(d!))).toMatchObject({ id: during.id });
    expect(verifierFor('old-secret').verify(d!.body.toString(), headersOf(d!))).toMatchObject({ id: during.id });
    // X-Hmac-Signature uses the newest secret only.
    expect(easypost.Utils.validateWebhook(d!.body, d!.headers, 'new-secret').id).toBe(during.id);
    expect(() => easypost.Utils.validateWebhook(d!.body, d!.headers, 'old-secret')).toThrow();

    // Once the grace period is over, the old secret signs nothing.
    // expires_at is given to the second: the real instant is up to a second later.
    await eventually(async () => (Date.now() > expires + 1000 ? true : undefined), GRACE_MS + 5000, 'the grace period to end');
    const after = await publish(sys, own.user.id, 'test');
    const [, d2] = await r.waitFor(2);
    expect(String(d2!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifierFor('new-secret').verify(d2!.body.toString(), headersOf(d2!))).toMatchObject({ id: after.id });
    expect(() => verifierFor('old-secret').verify(d2!.body.toString(), headersOf(d2!))).toThrow();
  });

  it('refuses a bad secret and another account\'s webhook, and leaves the secret as it was', async () => {
    const own = await createAccount(sys);
    const other = await createAccount(sys);
    const r = await receiver();
    const hook = await webhook(sys, own.testKey, r.url, { webhook_secret: 'kept' });
    const bad = await call(sys, 'POST', `/webhooks/${hook.id}/rotate_secret`, { key: own.testKey, body: { webhook_secret: 'a\u0000b' } });
    expect(bad.status).toBe(422);
    expect(errorOf(bad)).toMatchObject({ code: 'WEBHOOK.INVALID', errors: [{ field: 'webhook_secret' }] });
    const foreign = await call(sys, 'POST', `/webhooks/${hook.id}/rotate_secret`, { key: other.testKey, body: {} });
    expect(foreign.status).toBe(404);
    const event = await publish(sys, own.user.id, 'test');
    const [d] = await r.waitFor(1);
    expect(easypost.Utils.validateWebhook(d!.body, d!.headers, 'kept').id).toBe(event.id);
    expect(String(d!.headers['webhook-signature']).split(' ')).toHaveLength(1);
  });
});

describe('test events', () => {
  it('delivers a sample of the chosen type to that webhook only, marked, through the attempt log', async () => {
    const own = await createAccount(sys);
    const [target, bystander] = [await receiver(), await receiver()];
    const hook = await webhook(sys, own.testKey, target.url);
    await webhook(sys, own.testKey, bystander.url);
    const res = await call(sys, 'POST', `/webhooks/${hook.id}/test`, { key: own.testKey, body: { description: 'batch.created' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ object: 'Event', description: 'batch.created', mode: 'test', result: { object: 'Batch', state: 'created' } });
    expect(res.body.pending_urls).toEqual([target.url]);

    const [d] = await target.waitFor(1);
    expect(d!.headers['x-shiphook-test']).toBe('true');
    expect(d!.json).toMatchObject({ id: res.body.id, description: 'batch.created', result: { object: 'Batch' } });
    await eventStatus(sys, own.testKey, res.body.id, 'completed');
    const payloads = await call(sys, 'GET', `/events/${res.body.id}/payloads`, { key: own.testKey });
    expect(payloads.body.payloads).toHaveLength(1);
    expect(payloads.body.payloads[0].request_headers['X-Shiphook-Test']).toBe('true');
    // Real events are not marked; the other webhook never heard of the test.
    const real = await publish(sys, own.user.id, 'test');
    const [, d2] = await target.waitFor(2);
    expect(d2!.json.id).toBe(real.id);
    expect(d2!.headers['x-shiphook-test']).toBeUndefined();
    const [b] = await bystander.waitFor(1);
    expect(b!.json.id).toBe(real.id);
    expect(bystander.deliveries).toHaveLength(1);
  });

  it('defaults to tracker.updated; refuses unknown types, disabled and foreign webhooks without writing an event', async () => {
    const own = await createAccount(sys);
    const other = await createAccount(sys);
    const r = await receiver();
    const hook = await webhook(sys, own.testKey, r.url);
    const before = (await call(sys, 'GET', '/events', { key: own.testKey })).body.events.length;
    const unknown = await call(sys, 'POST', `/webhooks/${hook.id}/test`, { key: own.testKey, body: { description: 'shipment.exploded' } });
    expect(unknown.status).toBe(422);
    expect(errorOf(unknown)).toMatchObject({ code: 'WEBHOOK.EVENT.INVALID', errors: [{ field: 'description' }] });
    expect((await call(sys, 'POST', `/webhooks/${hook.id}/test`, { key: other.testKey })).status).toBe(404);
    expect((await call(sys, 'POST', `/webhooks/${hook.id}/test`, { key: own.prodKey })).status).toBe(404); // other mode
    await sys.db.updateTable('webhooks').set({ disabled_at: new Date() }).where('id', '=', hook.id).execute();
    const disabled = await call(sys, 'POST', `/webhooks/${hook.id}/test`, { key: own.testKey });
    expect(disabled.status).toBe(422);
    expect((await call(sys, 'GET', '/events', { key: own.testKey })).body.events).toHaveLength(before);

    await call(sys, 'PATCH', `/webhooks/${hook.id}`, { key: own.testKey, body: {} }); // re-enables
    const sent = await call(sys, 'POST', `/webhooks/${hook.id}/test`, { key: own.testKey });
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({ description: 'tracker.updated', result: { object: 'Tracker' } });
    expect((await r.waitFor(1))[0]!.headers['x-shiphook-test']).toBe('true');
  });
});

describe('webhook health', () => {
  it('shows a run of failures with the last error, then the recovery', async () => {
    const own = await createAccount(sys);
    const other = await createAccount(sys);
    const r = await receiver(status(500));
    const hook = await webhook(sys, own.testKey, r.url);
    const fresh = await call(sys, 'GET', `/webhooks/${hook.id}/health`, { key: own.testKey });
    expect(fresh.body).toMatchObject({ object: 'WebhookHealth', webhook_id: hook.id, status: 'untested', consecutive_failures: 0, last_24h: { attempts: 0 } });

    await publish(sys, own.user.id, 'test');
    const failing = await eventually(async () => {
      const h = await call(sys, 'GET', `/webhooks/${hook.id}/health`, { key: own.testKey });
      // The attempt's Payload is written a moment before the run of failures is counted.
      return h.body.status === 'failing' && h.body.failing_since ? h.body : undefined;
    }, 20_000, 'the webhook to be failing');
    expect(failing.consecutive_failures).toBeGreaterThanOrEqual(1);
    expect(failing.failing_since).toEqual(expect.any(String));
    expect(failing).toMatchObject({ last_failure_response_code: 500, last_error: 'nope', last_success_at: null });
    expect(failing.last_24h.failed).toBeGreaterThanOrEqual(1);

    r.answer(status(200));
    const healthy = await eventually(async () => {
      const h = await call(sys, 'GET', `/webhooks/${hook.id}/health`, { key: own.testKey });
      return h.body.status === 'healthy' ? h.body : undefined;
    }, 20_000, 'the webhook to recover');
    expect(healthy).toMatchObject({ consecutive_failures: 0, failing_since: null, last_success_at: expect.any(String) });
    expect(healthy.last_24h.succeeded).toBe(1);
    expect((await call(sys, 'GET', `/webhooks/${hook.id}/health`, { key: other.testKey })).status).toBe(404);
  });

  it('counts each failed attempt once, whichever statement recorded it (attempt 1, the retries, the last attempt)', async () => {
    const own = await createAccount(sys);
    const r = await receiver(status(500));
    const hook = await webhook(sys, own.testKey, r.url);
    const event = await publish(sys, own.user.id, 'test');
    // The tests' schedule (test/support/test-config.ts) has three retries: four attempts.
    await eventStatus(sys, own.testKey, event.id, 'failed');
    const health = await eventually(async () => {
      const h = await call(sys, 'GET', `/webhooks/${hook.id}/health`, { key: own.testKey });
      return h.body.consecutive_failures >= 4 ? h.body : undefined;
    }, 20_000, 'the last failure to be counted');
    expect(health.consecutive_failures).toBe(4);
    expect(r.deliveries).toHaveLength(4);
    expect(health.last_24h).toMatchObject({ attempts: 4, failed: 4 });
  });
});
