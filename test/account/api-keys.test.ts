import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;

beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

async function childOf(acct: Account) {
  const res = await call(sys, 'POST', '/users', { key: acct.prodKey, body: { user: { name: 'Child' } } });
  const keys = res.body.api_keys as { id: string; mode: string; key: string }[];
  return { id: res.body.id as string, prod: keys.find((k) => k.mode === 'production')!, test: keys.find((k) => k.mode === 'test')! };
}

describe('GET /api_keys', () => {
  it('lists both modes of the user and its children, shaped {id, keys, children}', async () => {
    const acct = await createAccount(sys);
    const child = await childOf(acct);
    const res = await call(sys, 'GET', '/api_keys', { key: acct.prodKey });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['children', 'id', 'keys']);
    expect(res.body.id).toBe(acct.user.id);
    expect(res.body.keys.map((k: any) => k.mode).sort()).toEqual(['production', 'test']);
    expect(res.body.keys[0]).toEqual({
      id: expect.stringMatching(/^ak_[0-9a-f]{32}$/),
      object: 'ApiKey',
      mode: expect.any(String),
      key: expect.any(String),
      created_at: expect.stringMatching(/Z$/),
      active: true,
    });
    expect(res.body.children).toEqual([{ id: child.id, keys: expect.any(Array), children: [] }]);
    expect(res.body.children[0].keys.map((k: any) => k.key).sort()).toEqual([child.prod.key, child.test.key].sort());
  });

  it('a child sees only its own keys', async () => {
    const acct = await createAccount(sys);
    const child = await childOf(acct);
    const res = await call(sys, 'GET', '/api_keys', { key: child.prod.key });
    expect(res.body.id).toBe(child.id);
    expect(res.body.keys).toHaveLength(2);
    expect(res.body.children).toEqual([]);
  });
});

describe('POST /api_keys', () => {
  it('a ReferralCustomer gets a key for itself and for each child', async () => {
    const acct = await createAccount(sys, { referral_customer: true });
    const child = await childOf(acct);
    const res = await call(sys, 'POST', '/api_keys', { key: acct.prodKey, body: { mode: 'test' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ object: 'ApiKey', mode: 'test', active: true });
    const works = await call(sys, 'GET', '/users', { key: acct.prodKey });
    expect(works.status).toBe(200);
    const list = await call(sys, 'GET', '/api_keys', { key: acct.prodKey });
    expect(list.body.keys.filter((k: any) => k.mode === 'test')).toHaveLength(2);
    expect(list.body.children[0].keys.filter((k: any) => k.mode === 'test')).toHaveLength(2);
    expect(list.body.children[0].id).toBe(child.id);
  });

  it('a child creates only for itself', async () => {
    const acct = await createAccount(sys);
    const child = await childOf(acct);
    const res = await call(sys, 'POST', '/api_keys', { key: child.prod.key, body: { mode: 'production' } });
    expect(res.status).toBe(201);
    const list = await call(sys, 'GET', '/api_keys', { key: acct.prodKey });
    expect(list.body.keys).toHaveLength(2);
    expect(list.body.children[0].keys).toHaveLength(3);
  });

  it('a plain parent is refused with FORBIDDEN advising sales', async () => {
    const acct = await createAccount(sys);
    const res = await call(sys, 'POST', '/api_keys', { key: acct.prodKey, body: { mode: 'test' } });
    expect(res.status).toBe(403);
    expect(errorOf(res).code).toBe('FORBIDDEN');
    expect(errorOf(res).message).toMatch(/contact sales/i);
  });

  it('an invalid mode → 422, a test key → 403 MODE.UNAUTHORIZED', async () => {
    const acct = await createAccount(sys, { referral_customer: true });
    const bad = await call(sys, 'POST', '/api_keys', { key: acct.prodKey, body: { mode: 'staging' } });
    expect(bad.status).toBe(422);
    expect(errorOf(bad).errors[0].field).toBe('mode');
    const test = await call(sys, 'POST', '/api_keys', { key: acct.testKey, body: { mode: 'test' } });
    expect(test.status).toBe(403);
    expect(errorOf(test).code).toBe('MODE.UNAUTHORIZED');
  });
});

describe('enable, disable, delete', () => {
  it('disable takes effect on the very next request; enable restores', async () => {
    const acct = await createAccount(sys, { referral_customer: true });
    const list = await call(sys, 'GET', '/api_keys', { key: acct.prodKey });
    const testKey = list.body.keys.find((k: any) => k.mode === 'test');
    const off = await call(sys, 'POST', `/api_keys/${testKey.id}/disable`, { key: acct.prodKey });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ id: testKey.id, active: false });
    expect((await call(sys, 'GET', '/webhooks_or_anything', { key: acct.testKey })).status).toBe(401);
    const on = await call(sys, 'POST', `/api_keys/${testKey.id}/enable`, { key: acct.prodKey });
    expect(on.body.active).toBe(true);
    expect((await call(sys, 'GET', '/users', { key: acct.testKey })).status).toBe(403); // authenticated again; users need production
  });

  it('a parent manages its children’s keys without being a ReferralCustomer', async () => {
    const acct = await createAccount(sys);
    const child = await childOf(acct);
    const off = await call(sys, 'POST', `/api_keys/${child.prod.id}/disable`, { key: acct.prodKey });
    expect(off.status).toBe(200);
    expect((await call(sys, 'GET', '/users', { key: child.prod.key })).status).toBe(401);
    const del = await call(sys, 'DELETE', `/api_keys/${child.test.id}`, { key: acct.prodKey });
    expect(del.status).toBe(200);
  });

  it('a plain parent may not touch its own keys: FORBIDDEN', async () => {
    const acct = await createAccount(sys);
    const list = await call(sys, 'GET', '/api_keys', { key: acct.prodKey });
    for (const path of [`/api_keys/${list.body.keys[0].id}/disable`, `/api_keys/${list.body.keys[0].id}/enable`]) {
      const res = await call(sys, 'POST', path, { key: acct.prodKey });
      expect(res.status).toBe(403);
      expect(errorOf(res).code).toBe('FORBIDDEN');
    }
    expect((await call(sys, 'DELETE', `/api_keys/${list.body.keys[0].id}`, { key: acct.prodKey })).status).toBe(403);
  });

  it('another account’s key is 404, and a child cannot manage its parent’s keys', async () => {
    const acct = await createAccount(sys, { referral_customer: true });
    const other = await createAccount(sys, { referral_customer: true });
    const theirs = await call(sys, 'GET', '/api_keys', { key: other.prodKey });
    const res = await call(sys, 'POST', `/api_keys/${theirs.body.keys[0].id}/disable`, { key: acct.prodKey });
    expect(res.status).toBe(404);
    const child = await childOf(acct);
    const mine = await call(sys, 'GET', '/api_keys', { key: acct.prodKey });
    expect((await call(sys, 'POST', `/api_keys/${mine.body.keys[0].id}/disable`, { key: child.prod.key })).status).toBe(404);
  });

  it('a deleted key is never listed, usable or enabled again', async () => {
    const acct = await createAccount(sys, { referral_customer: true });
    const created = await call(sys, 'POST', '/api_keys', { key: acct.prodKey, body: { mode: 'production' } });
    const del = await call(sys, 'DELETE', `/api_keys/${created.body.id}`, { key: acct.prodKey });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({}); // the API specification, 4.1: "Empty object"
    expect((await call(sys, 'GET', '/users', { key: created.body.key })).status).toBe(401);
    const list = await call(sys, 'GET', '/api_keys', { key: acct.prodKey });
    expect(list.body.keys.map((k: any) => k.id)).not.toContain(created.body.id);
    expect((await call(sys, 'POST', `/api_keys/${created.body.id}/enable`, { key: acct.prodKey })).status).toBe(404);
  });

  it('keys are stored as a SHA-256 digest for lookup', async () => {
    const acct = await createAccount(sys);
    const { createHash } = await import('node:crypto');
    const row = await sys.db.selectFrom('api_keys').select(['key_digest']).where('user_id', '=', acct.user.id).where('mode', '=', 'production').executeTakeFirstOrThrow();
    expect(Buffer.from(row.key_digest).equals(createHash('sha256').update(acct.prodKey).digest())).toBe(true);
  });
});
