import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Config } from '../../src/config';
import { call, createAccount, errorOf, type Res } from '../support/http';
import { startSystem, testConfig, type TestSystem } from '../support/system';

/**
 * Two API instances on the same database, as two api processes or replicas, with
 * low limits and one-minute windows (so a burst never straddles a window on a
 * busy machine): what one instance counted, the other refuses.
 */
const limits: Config['rateLimit'] = { perSecond: 4, replaysPerMinute: 2, purchasesPerMinute: 2, childrenPerMinute: 2, passwordChecksPerMinute: 2 };
let a: TestSystem;
let b: TestSystem;

beforeAll(async () => {
  a = await startSystem({ rateLimit: limits }, { rateLimitWindowSeconds: 60 });
  b = await startSystem({ rateLimit: limits }, { rateLimitWindowSeconds: 60 });
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

/** The tighter buckets alone: a general limit far above what the tests send. */
async function withBuckets(test: (a: TestSystem, b: TestSystem) => Promise<void>) {
  const generous = { ...limits, perSecond: 10_000 };
  const [c, d] = await Promise.all([startSystem({ rateLimit: generous }, { rateLimitWindowSeconds: 60 }), startSystem({ rateLimit: generous }, { rateLimitWindowSeconds: 60 })]);
  try {
    await test(c, d);
  } finally {
    await Promise.all([c.close(), d.close()]);
  }
}

const statuses = (list: Res[]) => list.map((r) => r.status).sort();

describe('rate limits', () => {
  it('count every /v2 request per key across api processes: over the limit → 429 RATE_LIMITED with Retry-After and X-RateLimit-*', async () => {
    const acct = await createAccount(a);
    const first = await call(a, 'GET', '/webhooks', { key: acct.prodKey });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('4');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('3');
    expect(Number(first.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);

    const rest = await Promise.all([a, b, a, b, a, b].map((sys) => call(sys, 'GET', '/webhooks', { key: acct.prodKey })));
    expect(statuses(rest)).toEqual([200, 200, 200, 429, 429, 429]);
    const refused = rest.find((r) => r.status === 429)!;
    expect(errorOf(refused).code).toBe('RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    // Another account is not affected.
    const other = await createAccount(a);
    expect((await call(b, 'GET', '/webhooks', { key: other.prodKey })).status).toBe(200);
  });

  it('test mode gets a quarter of the limit', async () => {
    const acct = await createAccount(a);
    const res = await Promise.all([1, 2, 3].map(() => call(a, 'GET', '/webhooks', { key: acct.testKey })));
    expect(statuses(res)).toEqual([200, 429, 429]);
    expect(res[0]!.headers.get('x-ratelimit-limit')).toBe('1');
  });

  it('count per account too: a second key does not double the budget', async () => {
    const acct = await createAccount(a, { referral_customer: true });
    const second = await call(a, 'POST', '/api_keys', { key: acct.prodKey, body: { mode: 'production' } });
    expect(second.status).toBe(201);
    // The key creation was request 1 of the account's 4.
    const keys = [acct.prodKey, second.body.key, acct.prodKey, second.body.key, acct.prodKey, second.body.key];
    const res = await Promise.all(keys.map((key, i) => call(i % 2 ? a : b, 'GET', '/webhooks', { key })));
    expect(statuses(res)).toEqual([200, 200, 200, 429, 429, 429]);
  });

  it('child creation and password checks have tighter buckets', () => withBuckets(async (a, b) => {
    const acct = await createAccount(a, { password: 'first password' });
    const children = [];
    for (let i = 0; i < 3; i++) children.push(await call(i % 2 ? a : b, 'POST', '/users', { key: acct.prodKey, body: { user: { name: `Child ${i}` } } }));
    expect(children.map((r) => r.status)).toEqual([201, 201, 429]);
    const live = await a.db.selectFrom('users').select('id').where('parent_id', '=', acct.user.id).execute();
    expect(live).toHaveLength(2);

    const checks = [];
    for (let i = 0; i < 3; i++) {
      checks.push(await call(i % 2 ? a : b, 'PATCH', '/users', { key: acct.prodKey, body: { user: { email: `x${Date.now()}@example.com`, current_password: `guess ${i}` } } }));
    }
    expect(checks.map((r) => r.status)).toEqual([422, 422, 429]);
    expect(errorOf(checks[2]!).code).toBe('RATE_LIMITED');
  }));

  it('replays and purchases each refuse past their bucket', () => withBuckets(async (a, b) => {
    const acct = await createAccount(a, { end_shipper_enabled: true });
    const event = await call(a, 'POST', '/admin/v1/events', {
      headers: { authorization: `Bearer ${testConfig().adminToken}` },
      body: { user_id: acct.user.id, mode: 'test', description: 'tracker.updated', result: { id: 'trk_1', object: 'Tracker' } },
    });
    const replays = [];
    for (let i = 0; i < 3; i++) replays.push(await call(i % 2 ? a : b, 'POST', `/events/${event.body.id}/replay`, { key: acct.testKey, body: {} }));
    expect(replays.map((r) => r.status)).toEqual([200, 200, 429]);
    const buys = [];
    // Unknown shipments: the bucket counts the attempt before the purchase is looked at.
    for (let i = 0; i < 3; i++) buys.push(await call(i % 2 ? a : b, 'POST', '/shipments/shp_00000000000000000000000000000000/buy', { key: acct.testKey, body: {} }));
    expect(buys.map((r) => r.status)).toEqual([expect.any(Number), expect.any(Number), 429]);
    expect(buys.slice(0, 2).every((r) => r.status !== 429)).toBe(true);
  }));

  it('SHIPHOOK_RATE_LIMIT_PER_SECOND=0 turns them off', async () => {
    const off = await startSystem({ rateLimit: { ...limits, perSecond: 0 } });
    try {
      const acct = await createAccount(off);
      const res = await Promise.all(Array.from({ length: 8 }, () => call(off, 'GET', '/webhooks', { key: acct.testKey })));
      expect(res.every((r) => r.status === 200)).toBe(true);
      expect(res[0]!.headers.get('x-ratelimit-limit')).toBeNull();
    } finally {
      await off.close();
    }
  });
});
