import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config';
import { eventStatus, publish, webhook } from '../support/events';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { type Receiver, startReceiver } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';
import { portalLink } from './portal-pages';

/**
 * The portal is a client of the API's declared operations (src/portal/router.ts): its
 * forms run them with their guards, so the account's replay bucket, the general limit of
 * the key that opened the session, and idempotency hold there as they do for /v2. Plain
 * HTTP (a cookie and the forms' hidden fields), no browser: what is checked is the door.
 */
const limits: Config['rateLimit'] = { perSecond: 10_000, replaysPerMinute: 2, purchasesPerMinute: 2, childrenPerMinute: 2, passwordChecksPerMinute: 2 };
let sys: TestSystem;
let receiver: Receiver;

beforeAll(async () => {
  // One-minute windows: a test's requests never straddle two on a busy machine.
  sys = await startSystem({ rateLimit: limits }, { rateLimitWindowSeconds: 60 });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await sys?.close();
});

/** A portal session of `key`'s user and mode, driven over HTTP as a browser would. */
async function portalSession(target: TestSystem, key: string) {
  const link = await portalLink(target, key);
  const opened = await fetch(link, { redirect: 'manual' });
  expect(opened.status).toBe(303);
  const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
  const get = (path: string) => fetch(new URL(`/portal${path}`, target.origin), { headers: { cookie }, redirect: 'manual' });
  /** The hidden fields of the form posting to `action` on the page at `path`. */
  const formOn = async (path: string, action: string): Promise<Record<string, string>> => {
    const page = await (await get(path)).text();
    const form = page.split('<form').find((f) => f.includes(`action="/portal${action}"`));
    if (!form) throw new Error(`no form posting to ${action} on ${path}`);
    return Object.fromEntries([...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]));
  };
  const post = (action: string, fields: Record<string, string>) =>
    fetch(new URL(`/portal${action}`, target.origin), { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields), redirect: 'manual' });
  return { get, formOn, post };
}

async function deliveredEvent(acct: Account): Promise<string> {
  const event = await publish(sys, acct.user.id, 'test');
  await eventStatus(sys, acct.testKey, event.id, 'completed');
  return event.id;
}

const dispatchedAt = async (eventId: string) =>
  (await sys.db.selectFrom('events').select('dispatched_at').where('id', '=', eventId).executeTakeFirstOrThrow()).dispatched_at?.getTime();

describe('the portal runs the declared operations with their guards', () => {
  it('replays from the portal count in the account\'s replay bucket with the API\'s: the third of either is refused and starts nothing', async () => {
    const acct = await createAccount(sys);
    await webhook(sys, acct.testKey, receiver.url);
    const eventId = await deliveredEvent(acct);
    const portal = await portalSession(sys, acct.testKey);

    expect((await call(sys, 'POST', `/events/${eventId}/replay`, { key: acct.testKey })).status).toBe(200);
    const replayed = await portal.post(`/events/${eventId}/replay`, await portal.formOn(`/events/${eventId}`, `/events/${eventId}/replay`));
    expect(replayed.status).toBe(303);
    expect(replayed.headers.get('location')).toContain('Replay%20started');

    // The bucket is spent: the portal's replay is refused as the API's is, and changes nothing.
    const before = await dispatchedAt(eventId);
    const refused = await portal.post(`/events/${eventId}/replay`, await portal.formOn(`/events/${eventId}`, `/events/${eventId}/replay`));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.text()).toContain('Too many requests');
    const api = await call(sys, 'POST', `/events/${eventId}/replay`, { key: acct.testKey });
    expect([api.status, errorOf(api).code]).toEqual([429, 'RATE_LIMITED']);
    expect(await dispatchedAt(eventId)).toBe(before);
  });

  it('recoveries from the portal share the bucket too, and a form sent twice is answered once', async () => {
    const acct = await createAccount(sys);
    const hook = await webhook(sys, acct.testKey, receiver.url);
    await deliveredEvent(acct);
    const portal = await portalSession(sys, acct.testKey);
    const recoveries = async () => (await sys.db.selectFrom('replays').select('id').where('webhook_id', '=', hook.id).execute()).length;
    const since = new Date(Date.now() - 3_600_000).toISOString().slice(0, 16);

    // The same form twice (a double click): one recovery, the same answer.
    const form = { ...(await portal.formOn(`/webhooks/${hook.id}`, `/webhooks/${hook.id}/recover`)), since };
    const first = await portal.post(`/webhooks/${hook.id}/recover`, form);
    const again = await portal.post(`/webhooks/${hook.id}/recover`, form);
    expect([first.status, again.status]).toEqual([303, 303]);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await recoveries()).toBe(1);

    // Both submits counted, as an API retry with the same Idempotency-Key does: the bucket is spent
    // for both doors, and a refused recovery starts none.
    const refused = await portal.post(`/webhooks/${hook.id}/recover`, { ...(await portal.formOn(`/webhooks/${hook.id}`, `/webhooks/${hook.id}/recover`)), since });
    expect(refused.status).toBe(429);
    const api = await call(sys, 'POST', `/webhooks/${hook.id}/recover`, { key: acct.testKey, body: { since: `${since}:00Z` } });
    expect([api.status, errorOf(api).code]).toEqual([429, 'RATE_LIMITED']);
    expect(await recoveries()).toBe(1);
  });

  it('every portal request counts against the general limit of the key that opened the session', async () => {
    // A quarter of 8 per window for a test key: 2 requests, whichever door they come through.
    const tight = await startSystem({ rateLimit: { ...limits, perSecond: 8 } }, { rateLimitWindowSeconds: 60 });
    try {
      const acct = await createAccount(tight);
      const portal = await portalSession(tight, acct.testKey); // the link: one API request
      expect((await portal.get('/')).status).toBe(200);
      const refused = await portal.get('/events');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
      expect((await call(tight, 'GET', '/webhooks', { key: acct.testKey })).status).toBe(429);
    } finally {
      await tight.close();
    }
  });
});
