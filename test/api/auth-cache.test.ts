import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrincipalCache } from '../../src/api/principal-cache';
import type { Principal } from '../../src/account/principal';
import { call, createAccount } from '../support/http';
import { eventually } from '../support/receiver';
import { startSystem, testConfig, type TestSystem } from '../support/system';

// Two API processes (each with its own authentication cache) on one database.
let a: TestSystem;
let b: TestSystem;

beforeAll(async () => {
  [a, b] = await Promise.all([startSystem(), startSystem()]);
});
afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
});

const keyId = async (sys: TestSystem, prodKey: string, key: string) =>
  (await call(sys, 'GET', '/api_keys', { key: prodKey })).body.keys.find((k: { key: string }) => k.key === key).id as string;

describe('authentication served from the cache', () => {
  it('a disabled key stops working at once in the process that disabled it, and in every other', async () => {
    const acct = await createAccount(a, { referral_customer: true });
    for (const sys of [a, b]) expect((await call(sys, 'GET', '/webhooks', { key: acct.testKey })).status).toBe(200); // cached in both
    const id = await keyId(a, acct.prodKey, acct.testKey);
    expect((await call(a, 'POST', `/api_keys/${id}/disable`, { key: acct.prodKey })).status).toBe(200);
    expect((await call(a, 'GET', '/webhooks', { key: acct.testKey })).status).toBe(401);
    // The other process hears of it from the database trigger, within milliseconds.
    await eventually(async () => ((await call(b, 'GET', '/webhooks', { key: acct.testKey })).status === 401 ? true : undefined), 2000, 'process b to refuse the key');
    expect((await call(a, 'POST', `/api_keys/${id}/enable`, { key: acct.prodKey })).status).toBe(200);
    expect((await call(b, 'GET', '/webhooks', { key: acct.testKey })).status).toBe(200);
  });

  it('a change to the user is seen through every process', async () => {
    const acct = await createAccount(a);
    expect((await call(b, 'GET', '/users', { key: acct.prodKey })).body.name).not.toBe('Renamed');
    expect((await call(a, 'PATCH', '/users', { key: acct.prodKey, body: { user: { name: 'Renamed' } } })).status).toBe(200);
    expect((await call(a, 'GET', '/users', { key: acct.prodKey })).body.name).toBe('Renamed');
    await eventually(async () => ((await call(b, 'GET', '/users', { key: acct.prodKey })).body.name === 'Renamed' ? true : undefined), 2000, 'process b to see the new name');
  });

  it('a key works everywhere as soon as it is created (unknown keys are never cached)', async () => {
    const acct = await createAccount(a, { referral_customer: true });
    const created = await call(a, 'POST', '/api_keys', { key: acct.prodKey, body: { mode: 'test' } });
    expect(created.status).toBe(201);
    expect((await call(b, 'GET', '/webhooks', { key: created.body.key })).status).toBe(200);
  });

  it('a lookup that began before its user changed is not kept', async () => {
    const cache = startPrincipalCache(testConfig().databaseUrl!, { ttlMs: 60_000, maxEntries: 100 });
    try {
      const principal = { user: { id: 'user_race' }, mode: 'test', keyId: 'ak_race' } as unknown as Principal;
      await eventually(async () => {
        cache.set('probe', principal, cache.begin());
        return cache.get('probe'); // kept once the cache listens
      }, 5000, 'the cache to listen');
      const since = cache.begin();
      cache.forgetUser('user_race'); // the change lands while the lookup is in flight
      cache.set('digest', principal, since);
      expect(cache.get('digest')).toBeUndefined();
      cache.set('digest', principal, cache.begin()); // a lookup after the change is kept
      expect(cache.get('digest')).toBe(principal);
    } finally {
      await cache.close();
    }
  });
});
