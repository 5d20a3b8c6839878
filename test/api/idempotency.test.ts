import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_SCOPE } from '../../src/idempotency/scope';
import { canonicalRequest, keyMaterial } from '../../src/idempotency/key-material';
import { deleteExpiredIdempotencyKeys } from '../../src/idempotency/store';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { startSystem, type TestSystem } from '../support/system';
import { endShipper, shipment } from '../support/shipping';
import { TEST_ENV } from '../support/test-config';

let sys: TestSystem;
const ADMIN = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };

beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

const newEvent = (userId: string, extra: Record<string, unknown> = {}) => ({
  user_id: userId,
  mode: 'test',
  description: 'tracker.updated',
  result: { object: 'Tracker', id: 'trk_1', status: 'in_transit' },
  ...extra,
});
const publishWithKey = (key: string, body: unknown) => call(sys, 'POST', '/admin/v1/events', { headers: { ...ADMIN, 'idempotency-key': key }, body });
const eventsOf = async (userId: string) => (await sys.db.selectFrom('events').select('id').where('user_id', '=', userId).execute()).map((r) => r.id);

describe('Idempotency-Key on POST /admin/v1/events', () => {
  it('twenty concurrent publishes with one key make one event, and all twenty answer it', async () => {
    const acct = await createAccount(sys);
    const key = randomUUID();
    const body = newEvent(acct.user.id);
    const answers = await Promise.all(Array.from({ length: 20 }, () => publishWithKey(key, body)));
    const events = await eventsOf(acct.user.id);
    expect(events).toHaveLength(1);
    for (const res of answers) {
      expect(res.status).toBe(201);
      expect(res.body.id).toBe(events[0]);
    }
    // One did the work; nineteen were given its answer, the same body.
    const first = answers.filter((r) => r.headers.get('idempotent-replayed') === null);
    expect(first).toHaveLength(1);
    for (const res of answers) expect(res.body).toEqual(first[0]!.body);
    expect(answers.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
  });

  it('replays the first answer to a later retry, its JSON keys in another order, without publishing again', async () => {
    const acct = await createAccount(sys);
    const key = randomUUID();
    const first = await publishWithKey(key, newEvent(acct.user.id));
    expect(first.status).toBe(201);
    const reordered = Object.fromEntries(Object.entries(newEvent(acct.user.id)).reverse());
    const retry = await publishWithKey(key, reordered);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await eventsOf(acct.user.id)).toEqual([first.body.id]);
  });

  it('refuses the same key with a different body, and publishes nothing for it', async () => {
    const acct = await createAccount(sys);
    const key = randomUUID();
    const first = await publishWithKey(key, newEvent(acct.user.id));
    const changed = await publishWithKey(key, newEvent(acct.user.id, { description: 'batch.created', result: { object: 'Batch' } }));
    expect(changed.status).toBe(422);
    expect(errorOf(changed).code).toBe('IDEMPOTENCY_KEY.REUSED');
    expect(errorOf(changed).message).toMatch(/different request/);
    expect(errorOf(changed).errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    expect(await eventsOf(acct.user.id)).toEqual([first.body.id]);
  });

  it('tells a retry to come back while the first request is still being answered, and takes over a key whose request died', async () => {
    const acct = await createAccount(sys);
    const key = randomUUID();
    const body = newEvent(acct.user.id);
    // The state a request leaves while it works (or when its process died mid-way): claimed, no answer.
    const material = keyMaterial(OPERATOR_SCOPE, key);
    const where = { scope: OPERATOR_SCOPE, key_digest: material.digest };
    await sys.db
      .insertInto('idempotency_keys')
      .values({ ...where, fingerprint: material.fingerprint(canonicalRequest('POST', '/admin/v1/events', body)), status: null, answer: null, expires_at: new Date(Date.now() + 3_600_000) })
      .execute();
    const waiting = await publishWithKey(key, body);
    expect(waiting.status).toBe(503);
    expect(errorOf(waiting).code).toBe('IDEMPOTENCY_KEY.IN_USE');
    expect(waiting.headers.get('retry-after')).toBe('1');
    expect(await eventsOf(acct.user.id)).toEqual([]);
    // Claimed long enough ago that its request cannot still be running: the next one does the work.
    await sys.db.updateTable('idempotency_keys').set({ locked_at: new Date(Date.now() - 6 * 60_000) }).where('scope', '=', where.scope).where('key_digest', '=', where.key_digest).execute();
    const taken = await publishWithKey(key, body);
    expect(taken.status).toBe(201);
    expect(taken.headers.get('idempotent-replayed')).toBeNull();
    expect(await eventsOf(acct.user.id)).toEqual([taken.body.id]);
    const replayed = await publishWithKey(key, body);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(taken.body);
  }, 30_000);

  it('publishes every time without the header', async () => {
    const acct = await createAccount(sys);
    await publishWithKey(randomUUID(), newEvent(acct.user.id));
    const plain = () => call(sys, 'POST', '/admin/v1/events', { headers: ADMIN, body: newEvent(acct.user.id) });
    expect((await plain()).status).toBe(201);
    expect((await plain()).status).toBe(201);
    expect(await eventsOf(acct.user.id)).toHaveLength(3);
  });

  it('refuses a key that is too long, empty or not printable with 422, doing nothing', async () => {
    const acct = await createAccount(sys);
    for (const bad of ['k'.repeat(256), '', 'a\tb', 'caf\u00e9']) {
      const res = await publishWithKey(bad, newEvent(acct.user.id));
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(errorOf(res).code).toBe('IDEMPOTENCY_KEY.INVALID');
      expect(errorOf(res).errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    }
    expect(await eventsOf(acct.user.id)).toEqual([]);
    expect((await publishWithKey('k'.repeat(255), newEvent(acct.user.id))).status).toBe(201);
  });
});

describe('Idempotency-Key on /v2', () => {
  const createWebhook = (acct: Account, key: string, url: string, apiKey = acct.testKey) =>
    call(sys, 'POST', '/webhooks', { key: apiKey, headers: { 'idempotency-key': key }, body: { webhook: { url } } });
  const webhooksOf = async (userId: string) => (await sys.db.selectFrom('webhooks').select(['id', 'mode']).where('user_id', '=', userId).execute());

  it('scopes keys by caller: two users, and one user’s test and production keys, do not share them', async () => {
    const a = await createAccount(sys);
    const b = await createAccount(sys);
    const key = randomUUID();
    const url = 'https://example.com/hook';
    const ra = await createWebhook(a, key, url);
    const rb = await createWebhook(b, key, url);
    const rp = await createWebhook(a, key, url, a.prodKey);
    for (const res of [ra, rb, rp]) {
      expect(res.status).toBe(201);
      expect(res.headers.get('idempotent-replayed')).toBeNull();
    }
    expect(new Set([ra.body.id, rb.body.id, rp.body.id]).size).toBe(3);
    expect((await webhooksOf(a.user.id)).map((w) => w.mode).sort()).toEqual(['production', 'test']);
    expect(await webhooksOf(b.user.id)).toHaveLength(1);
    const again = await createWebhook(b, key, url);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(rb.body);
    expect(await webhooksOf(b.user.id)).toHaveLength(1);
  });

  it('buys once for concurrent retries of one buy: every answer is the purchase, the balance debited once', async () => {
    const acct = await createAccount(sys, { end_shipper_enabled: true, balance: '100' });
    const es = await endShipper(sys, acct.prodKey);
    const shp = await shipment(sys, acct.prodKey);
    const key = randomUUID();
    const body = { rate: { id: shp.rates[0].id }, end_shipper_id: es.id };
    const answers = await Promise.all(Array.from({ length: 4 }, () => call(sys, 'POST', `/shipments/${shp.id}/buy`, { key: acct.prodKey, headers: { 'idempotency-key': key }, body })));
    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(res.body).toEqual(answers[0]!.body);
    }
    const me = await call(sys, 'GET', '/users', { key: acct.prodKey });
    expect(Number(me.body.balance)).toBeCloseTo(100 - Number(shp.rates[0].rate), 5);
    expect(await sys.db.selectFrom('trackers').select('id').where('shipment_id', '=', shp.id).execute()).toHaveLength(1);
  });

  it('replays a refusal of the operation too (a 4XX is an answer), but not an answer it never kept', async () => {
    const acct = await createAccount(sys);
    const key = randomUUID();
    const bad = await createWebhook(acct, key, 'not a url');
    expect(bad.status).toBe(422);
    const again = await createWebhook(acct, key, 'not a url');
    expect(again.status).toBe(422);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(bad.body);
    expect(await webhooksOf(acct.user.id)).toEqual([]);
  });

  it('replays an API key’s creation with the same key, and keeps no part of it readable in the database', async () => {
    const acct = await createAccount(sys, { referral_customer: true });
    const key = randomUUID();
    const create = () => call(sys, 'POST', '/api_keys', { key: acct.prodKey, headers: { 'idempotency-key': key }, body: { mode: 'test' } });
    const first = await create();
    expect(first.status).toBe(201);
    const again = await create();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const keys = await sys.db.selectFrom('api_keys').select('id').where('user_id', '=', acct.user.id).where('mode', '=', 'test').execute();
    expect(keys).toHaveLength(2); // the account's own test key and this one
    const rows = await sys.db.selectFrom('idempotency_keys').selectAll().where('scope', '=', `${acct.user.id}/production`).execute();
    expect(rows).toHaveLength(1);
    const stored = Buffer.concat([rows[0]!.answer!, rows[0]!.key_digest, rows[0]!.fingerprint]);
    expect(stored.includes(Buffer.from(first.body.key))).toBe(false);
    expect(stored.includes(Buffer.from(first.body.id))).toBe(false);
    expect(stored.includes(Buffer.from(key))).toBe(false);
  });

  it('forgets keys once expired: the sweep removes them in bounded steps and the key then does the work again', async () => {
    const acct = await createAccount(sys);
    const keys = [randomUUID(), randomUUID(), randomUUID()];
    const first = await Promise.all(keys.map((k) => createWebhook(acct, k, 'https://example.com/a')));
    const scope = `${acct.user.id}/test`;
    await sys.db.updateTable('idempotency_keys').set({ expires_at: new Date(Date.now() - 60_000) }).where('scope', '=', scope).execute();
    // Expired and not yet swept: already not replayed.
    const fresh = await createWebhook(acct, keys[0]!, 'https://example.com/a');
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(fresh.body.id).not.toBe(first[0]!.body.id);
    const remaining = () => sys.db.selectFrom('idempotency_keys').select('key_digest').where('scope', '=', scope).where('expires_at', '<', new Date()).execute();
    expect(await remaining()).toHaveLength(2);
    let removed = 0;
    for (let step = await deleteExpiredIdempotencyKeys(sys.db, { before: new Date(), limit: 1 }); step > 0; step = await deleteExpiredIdempotencyKeys(sys.db, { before: new Date(), limit: 1 })) {
      expect(step).toBe(1);
      removed += step;
    }
    expect(removed).toBeGreaterThanOrEqual(2);
    expect(await remaining()).toEqual([]);
    // The live key (taken over by the fresh request) is kept.
    const replay = await createWebhook(acct, keys[0]!, 'https://example.com/a');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(fresh.body.id);
  });
});
