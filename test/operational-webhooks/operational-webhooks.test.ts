import { createHmac } from 'node:crypto';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONAL_EVENT_TYPES } from '../../src/operational-webhooks/types';
import { PLATFORM_USER_ID } from '../../src/account/platform-user';
import { publish, webhook, untilDisabled } from '../support/events';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { type IsolatedSystem, isolatedSystem } from '../support/isolated';
import { type Delivery, eventually, type Receiver, startReceiver, status } from '../support/receiver';
import type { TestSystem } from '../support/system';
import { TEST_ENV } from '../support/test-config';

/**
 * Operational webhooks end to end, on a system of their own (operational endpoints are the
 * whole platform's: the suite's other files would feed them): the operator registers an
 * endpoint, customers' webhooks fail, recover, get disabled, re-enabled, rotated and
 * recovered, and the endpoint hears each change once, signed, without a secret in it.
 */
const ADMIN = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };
const CUSTOMER_SECRET = 'customer-secret-never-in-an-operational-event';
const HEADER_VALUE = 'custom-header-value-never-in-an-operational-event';

let iso: IsolatedSystem;
let sys: TestSystem;
let acct: Account;
let ops: Receiver;
let opsSecret: string;
const receivers: Receiver[] = [];

const admin = (method: string, path: string, body?: unknown) => call(sys, method, `/admin/v1${path}`, { headers: ADMIN, body });

async function receiver(answer = status(200)) {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

beforeAll(async () => {
  iso = await isolatedSystem();
  sys = iso.api;
  await iso.workerProcess();
  acct = await createAccount(sys);
  ops = await receiver();
}, 120_000);
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await iso?.close();
});

/** What the operational endpoint received about one customer webhook, by type: distinct events (delivery is at least once). */
function heardAbout(hookId: string): Map<string, Delivery[]> {
  const byType = new Map<string, Delivery[]>();
  const seen = new Set<string>();
  for (const d of ops.deliveries) {
    if (d.json?.result?.id !== hookId || seen.has(d.json.id)) continue;
    seen.add(d.json.id);
    byType.set(d.json.description, [...(byType.get(d.json.description) ?? []), d]);
  }
  return byType;
}

/** Waits until the endpoint heard `type` about the webhook `n` times; returns those deliveries. */
const heard = (hookId: string, type: string, n = 1) =>
  eventually(async () => {
    const got = heardAbout(hookId).get(type) ?? [];
    return got.length >= n ? got : undefined;
  }, 30_000, `${n} × ${type} about ${hookId}`);

/** The operational events emitted about a webhook, by type, as the database holds them. */
async function emitted(hookId: string): Promise<Record<string, number>> {
  const { rows } = await sql<{ description: string; n: number }>`
    select description, count(*)::int as n from events where user_id = ${PLATFORM_USER_ID} and result->>'id' = ${hookId} group by 1`.execute(sys.db);
  return Object.fromEntries(rows.map((r) => [r.description, r.n]));
}

describe('without an operational endpoint', () => {
  it('a webhook\'s failures write nothing of the platform: no user, no event', async () => {
    const refusing = await receiver(status(410));
    const hook = await webhook(sys, acct.testKey, refusing.url);
    await publish(sys, acct.user.id, 'test');
    await untilDisabled(sys, acct.testKey, hook.id, 30_000);
    expect(await sys.db.selectFrom('users').select('id').where('id', '=', PLATFORM_USER_ID).execute()).toEqual([]);
    expect(await sys.db.selectFrom('events').select('id').where('user_id', '=', PLATFORM_USER_ID).execute()).toEqual([]);
    expect((await admin('GET', '/operational_webhooks')).body).toEqual({ operational_webhooks: [] });
    expect((await admin('GET', '/operational_events')).body).toEqual({ events: [], has_more: false });
    await call(sys, 'DELETE', `/webhooks/${hook.id}`, { key: acct.testKey });
  });
});

describe('registering operational webhooks (/admin/v1/operational_webhooks)', () => {
  it('creates, lists, updates and deletes endpoints; answers the secret once; refuses customer types and private addresses', async () => {
    const created = await admin('POST', '/operational_webhooks', { url: ops.url, event_types: ['webhook.*', 'delivery.exhausted', 'webhook.*'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'OperationalWebhook', url: ops.url, event_types: ['delivery.exhausted', 'webhook.*'], disabled_at: null });
    expect(created.body.webhook_secret).toMatch(/^whsec_/);
    opsSecret = created.body.webhook_secret;
    const listed = await admin('GET', '/operational_webhooks');
    expect(listed.body.operational_webhooks.map((h: { id: string }) => h.id)).toEqual([created.body.id]);
    expect(JSON.stringify(listed.body)).not.toContain(opsSecret);
    const updated = await admin('PATCH', `/operational_webhooks/${created.body.id}`, { event_types: null });
    expect(updated).toMatchObject({ status: 200, body: { id: created.body.id, event_types: null } });
    const moved = await admin('PATCH', `/operational_webhooks/${created.body.id}`, { url: 'https://elsewhere.example.com/' });
    expect(errorOf(moved)).toMatchObject({ code: 'WEBHOOK.INVALID', errors: [{ field: 'url' }] });

    const customerType = await admin('POST', '/operational_webhooks', { url: ops.url, event_types: ['tracker.updated'] });
    expect(customerType.status).toBe(422);
    expect(errorOf(customerType)).toMatchObject({ code: 'WEBHOOK.INVALID', errors: [{ field: 'event_types[0]' }] });
    const privateAddress = await admin('POST', '/operational_webhooks', { url: 'https://10.1.2.3/hook' });
    expect(errorOf(privateAddress)).toMatchObject({ code: 'WEBHOOK.INVALID', errors: [{ field: 'url', message: 'must point to a public address' }] });

    const other = await admin('POST', '/operational_webhooks', { url: ops.url, webhook_secret: 'given-secret' });
    expect(other.body.webhook_secret).toBe('given-secret');
    expect((await admin('DELETE', `/operational_webhooks/${other.body.id}`)).body).toEqual({});
    expect((await admin('GET', `/operational_webhooks/${other.body.id}`)).status).toBe(404);

    // A customer's webhook is not an operational endpoint, and the platform is no customer's user.
    const hook = await webhook(sys, acct.testKey, ops.url);
    expect((await admin('GET', `/operational_webhooks/${hook.id}`)).status).toBe(404);
    expect((await call(sys, 'GET', `/users/${PLATFORM_USER_ID}`, { key: acct.prodKey })).status).toBe(404);
    await call(sys, 'DELETE', `/webhooks/${hook.id}`, { key: acct.testKey });
    expect((await call(sys, 'GET', '/admin/v1/operational_webhooks', {})).status).toBe(401);
  });

  it('keeps the platform user out of the operator\'s user update: no email or password is set on it', async () => {
    const endpoint = await admin('POST', '/operational_webhooks', { url: ops.url }); // the platform user exists from the first endpoint on
    const before = await sys.db.selectFrom('users').select(['email', 'password_hash', 'updated_at']).where('id', '=', PLATFORM_USER_ID).executeTakeFirstOrThrow();
    const res = await admin('PATCH', `/users/${PLATFORM_USER_ID}`, { email: `platform${Date.now()}@example.com`, password: 'a-long-enough-password' });
    expect(res.status).toBe(404);
    expect(errorOf(res)).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining("is the platform's own user, which owns the operational webhooks") });
    const after = await sys.db.selectFrom('users').select(['email', 'password_hash', 'updated_at']).where('id', '=', PLATFORM_USER_ID).executeTakeFirstOrThrow();
    expect(after).toEqual(before);
    expect(after.email).toBeNull();
    expect((await admin('DELETE', `/operational_webhooks/${endpoint.body.id}`)).status).toBe(200);
  });

  it('documents the operations, and keeps the platform\'s types out of the customers\' catalogue', async () => {
    const doc = await (await fetch(`${sys.baseUrl}/openapi.json`)).json();
    expect(Object.keys(doc.paths['/admin/v1/operational_webhooks'])).toEqual(['post', 'get']);
    expect(Object.keys(doc.paths['/admin/v1/operational_webhooks/{id}']).sort()).toEqual(['delete', 'get', 'patch']);
    for (const type of OPERATIONAL_EVENT_TYPES) expect(Object.keys(doc.webhooks)).not.toContain(type);
    const refused = await call(sys, 'POST', '/admin/v1/events', { headers: ADMIN, body: { user_id: acct.user.id, mode: 'test', description: 'webhook.disabled', result: { object: 'Webhook' } } });
    expect(refused.status).toBe(422);
  });
});

describe('what the operational endpoint hears', () => {
  let failing: { id: string };
  let target: Receiver;
  const started = new Date();

  it('a run of failures, the delivery that used its last attempt, the disabling: each once, signed both ways, without the customer\'s secret or header values', async () => {
    target = await receiver(status(500));
    failing = await webhook(sys, acct.testKey, target.url, { webhook_secret: CUSTOMER_SECRET, custom_headers: [{ name: 'X-Api-Token', value: HEADER_VALUE }] });
    const event = await publish(sys, acct.user.id, 'test');
    const [begun] = await heard(failing.id, 'webhook.failing');
    const [exhausted] = await heard(failing.id, 'delivery.exhausted');
    const [disabled] = await heard(failing.id, 'webhook.disabled');
    expect(begun!.json).toMatchObject({ object: 'Event', mode: 'production', description: 'webhook.failing', result: { id: failing.id, object: 'Webhook', user_id: acct.user.id, mode: 'test', url: target.url, event_id: event.id } });
    expect(exhausted!.json.result).toMatchObject({ event_id: event.id, event_type: 'tracker.updated', attempts: 4, response_code: 500 });
    expect(disabled!.json.result).toMatchObject({ reason: 'sustained_failures', policy: { failures: 4, after: '1s' }, consecutive_failures: 4, last_response: { event_id: event.id, response_code: 500, attempt: 4 } });

    for (const d of [begun!, exhausted!, disabled!]) {
      expect(d.headers['x-shiphook-event-type']).toBe(d.json.description);
      expect(new Webhook(opsSecret).verify(d.body.toString(), d.headers as Record<string, string>)).toMatchObject({ id: d.json.id });
      expect(d.headers['x-hmac-signature']).toBe(`hmac-sha256-hex=${createHmac('sha256', opsSecret.normalize('NFKD')).update(d.body).digest('hex')}`);
      expect(d.body.toString()).not.toContain(CUSTOMER_SECRET);
      expect(d.body.toString()).not.toContain(HEADER_VALUE);
    }
    // Once each, though every failure's follow-up and the health workflow both looked.
    await untilDisabled(sys, acct.testKey, failing.id);
    expect(await emitted(failing.id)).toEqual({ 'webhook.failing': 1, 'delivery.exhausted': 1, 'webhook.disabled': 1 });
  });

  it('a re-enable and a secret replaced by the update; a rotation, never with the secret', async () => {
    const patched = await call(sys, 'PATCH', `/webhooks/${failing.id}`, { key: acct.testKey, body: { webhook_secret: `${CUSTOMER_SECRET}-2` } });
    expect(patched.status).toBe(201);
    const [reEnabled] = await heard(failing.id, 'webhook.re_enabled');
    expect(reEnabled!.json.result).toMatchObject({ was: 'disabled', disabled_reason: 'sustained_failures', event_id: null });
    const [replaced] = await heard(failing.id, 'secret.rotated');
    expect(replaced!.json.result).toMatchObject({ by: 'update', previous_secret_expires_at: null });

    const rotated = await call(sys, 'POST', `/webhooks/${failing.id}/rotate_secret`, { key: acct.testKey, body: {} });
    const rotations = await heard(failing.id, 'secret.rotated', 2);
    const rotation = rotations.find((d) => d.json.result.by === 'rotation')!;
    expect(rotation.json.result.previous_secret_expires_at).toBe(rotated.body.previous_secret_expires_at); // as the rotation answered it
    for (const d of [reEnabled!, ...rotations]) {
      for (const secret of [CUSTOMER_SECRET, rotated.body.webhook_secret]) expect(d.body.toString()).not.toContain(secret);
    }
    // An update of a webhook that was neither disabled nor failing re-enables nothing.
    await call(sys, 'PATCH', `/webhooks/${failing.id}`, { key: acct.testKey, body: { event_types: ['tracker.*'] } });
    expect(await emitted(failing.id)).toMatchObject({ 'webhook.re_enabled': 1, 'secret.rotated': 2 });
  });

  it('a run that ends with a success: failing, then recovered', async () => {
    let sent = 0;
    target.answer((_d, _i, res) => void res.writeHead(sent++ === 0 ? 503 : 200).end());
    await publish(sys, acct.user.id, 'test');
    await heard(failing.id, 'webhook.failing', 2);
    const [recovered] = await heard(failing.id, 'webhook.recovered');
    expect(recovered!.json.result).toMatchObject({ consecutive_failures: 1, last_response: { response_code: 200 } });
    expect(recovered!.json.result.failing_since).toEqual(expect.any(String));
    expect(await emitted(failing.id)).toMatchObject({ 'webhook.failing': 2, 'webhook.recovered': 1 });
  });

  it('a recovery that started every event again, with its counts', async () => {
    const recovery = await call(sys, 'POST', `/webhooks/${failing.id}/recover`, { key: acct.testKey, body: { since: started.toISOString() } });
    expect(recovery.status).toBe(202);
    const [finished] = await heard(failing.id, 'recovery.finished');
    expect(finished!.json.result).toMatchObject({ recovery_id: recovery.body.id, matched: recovery.body.matched, capped: false, since: started.toISOString() });
    expect(recovery.body.matched).toBeGreaterThanOrEqual(1);
  });

  it('410 Gone: disabled at once, reason endpoint_gone', async () => {
    const gone = await webhook(sys, acct.testKey, (await receiver(status(410))).url);
    await publish(sys, acct.user.id, 'test');
    const [disabled] = await heard(gone.id, 'webhook.disabled');
    expect(disabled!.json.result).toMatchObject({ reason: 'endpoint_gone', policy: null, last_response: { response_code: 410 } });
  });
});

describe('operational events about operational endpoints', () => {
  it('a failing operational endpoint is disabled by the same rules and reports nothing about itself; its events are recorded and replayable', async () => {
    const broken = await receiver(status(500));
    const endpoint = (await admin('POST', '/operational_webhooks', { url: broken.url, event_types: ['webhook.disabled'] })).body;
    // A customer's webhook that answers 410 gives the broken endpoint something to fail.
    const gone = await webhook(sys, acct.testKey, (await receiver(status(410))).url);
    await publish(sys, acct.user.id, 'test');
    await broken.waitFor(4, 30_000);
    const disabled = await eventually(async () => {
      const res = await admin('GET', `/operational_webhooks/${endpoint.id}`);
      return res.body.disabled_at ? res.body : undefined;
    }, 30_000, 'the broken operational endpoint disabled');
    expect(disabled.disabled_reason).toBe('sustained_failures');
    // Its exhaustion and its disabling would be operational events about a platform webhook: none.
    expect(await emitted(endpoint.id)).toEqual({});
    expect(heardAbout(endpoint.id).size).toBe(0);

    // Recorded: the event it failed, with every attempt.
    const [notice] = (await heard(gone.id, 'webhook.disabled')).map((d) => d.json);
    const listed = await admin('GET', `/operational_events?webhook_id=${gone.id}&description=webhook.disabled`);
    expect(listed.body.events.map((e: { id: string }) => e.id)).toEqual([notice.id]);
    const full = await admin('GET', `/operational_events/${notice.id}`);
    expect(full.body).toMatchObject({ id: notice.id, description: 'webhook.disabled', result: notice.result, status: 'failed' });
    const payloads = await admin('GET', `/operational_events/${notice.id}/payloads`);
    expect(payloads.body.payloads.filter((p: { response_code: number }) => p.response_code === 500)).toHaveLength(4);

    // Re-enabled and answering: a replay delivers the event it missed (the same id).
    broken.answer(status(200));
    expect((await admin('PATCH', `/operational_webhooks/${endpoint.id}`, {})).body.disabled_at).toBeNull();
    const replayed = await admin('POST', `/operational_events/${notice.id}/replay`);
    expect(replayed).toMatchObject({ status: 200, body: { id: notice.id, status: 'in_queue' } });
    await eventually(async () => (broken.deliveries.some((d, i) => i >= 4 && d.json?.id === notice.id) ? true : undefined), 30_000, 'the replayed event');
    // Many at once: the broad replay, by the platform user's id.
    const broad = await admin('POST', '/events/replay', { user_id: PLATFORM_USER_ID });
    expect(broad.status).toBe(202);
    expect(broad.body.matched).toBeGreaterThanOrEqual(1);
    expect((await admin('GET', '/operational_events/evt_00000000000000000000000000000000')).status).toBe(404);
    const customerEvent = await publish(sys, acct.user.id, 'test');
    expect((await admin('GET', `/operational_events/${customerEvent.id}`)).status).toBe(404);
  });
});
