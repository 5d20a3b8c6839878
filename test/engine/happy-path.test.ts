import EasyPostClient from '@easypost/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStatus, publish, webhook } from '../support/events';
import { type Account, call, createAccount } from '../support/http';
import { startReceiver } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;
let acct: Account;
const verifier: any = new EasyPostClient('unused');

beforeAll(async () => {
  sys = await startSystem();
  acct = await createAccount(sys);
});
afterAll(() => sys.close());

describe('delivery to webhooks that acknowledge', () => {
  it('delivers to three webhooks, signed, with custom headers and Basic auth → completed', async () => {
    const receivers = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
    const secret = 'sécret';
    const basicUrl = receivers[2]!.url.replace('http://', 'http://alice:p%40ss@');
    const hooks = [
      await webhook(sys, acct.testKey, receivers[0]!.url, { webhook_secret: secret, custom_headers: [{ name: 'X-Tenant', value: 'blue' }, { name: 'X-Hmac-Signature', value: 'spoofed' }] }),
      await webhook(sys, acct.testKey, receivers[1]!.url, { webhook_secret: secret }),
      await webhook(sys, acct.testKey, basicUrl),
    ];
    const event = await publish(sys, acct.user.id, 'test');
    expect(event).toMatchObject({ object: 'Event', status: 'in_queue', description: 'tracker.updated', result: { object: 'Tracker' } });
    expect(event.pending_urls).toHaveLength(3);
    expect(event.pending_urls).toContain('http://***@' + receivers[2]!.url.slice('http://'.length));

    const [a, b, c] = (await Promise.all(receivers.map((r) => r.waitFor(1)))).map((d) => d[0]!);
    for (const d of [a!, b!]) {
      const verified = verifier.Utils.validateWebhook(d.body, d.headers, secret);
      expect(verified.id).toBe(event.id);
      expect(d.body.toString()).toContain('"weight":15.0');
    }
    // The spoofed X-Hmac-Signature custom header lost to the service's own (seed 2.3 rule 7): the signature above verified.
    expect(() => verifier.Utils.validateWebhook(a!.body, a!.headers, 'secret')).toThrow();
    expect(a!.headers['x-tenant']).toBe('blue');
    expect(a!.headers['user-agent']).toMatch(/^shiphook\//);
    expect(a!.headers['content-type']).toBe('application/json');
    expect(a!.headers['webhook-id']).toBe(event.id);
    expect(c!.headers.authorization).toBe(`Basic ${Buffer.from('alice:p@ss').toString('base64')}`);
    expect(c!.headers['x-hmac-signature']).toBeUndefined();
    // The body is the full Event, the receiving URL still pending, credentials masked.
    expect(c!.json).toMatchObject({ id: event.id, object: 'Event', result: { object: 'Tracker' }, previous_attributes: { status: 'pre_transit' } });
    expect(c!.json.pending_urls.concat(c!.json.completed_urls)).toHaveLength(3);
    expect(c!.json.pending_urls).toContain(event.pending_urls.find((u: string) => u.includes('***@')));
    expect(c!.body.toString()).not.toMatch(/alice|p%40ss/);

    const done = await eventStatus(sys, acct.testKey, event.id, 'completed');
    expect(done.pending_urls).toEqual([]);
    expect(done.completed_urls.sort()).toEqual([...event.pending_urls].sort());
    expect(done).not.toHaveProperty('result');

    const payloads = await call(sys, 'GET', `/events/${event.id}/payloads`, { key: acct.testKey });
    expect(payloads.body.payloads).toHaveLength(3);
    const p = payloads.body.payloads.find((x: any) => x.request_url.includes('***@'));
    expect(p).toMatchObject({ object: 'Payload', response_code: 200, request_url: expect.stringContaining('http://***@') });
    expect(p.request_headers.Authorization).toBe('Basic ***');
    expect(JSON.stringify(payloads.body)).not.toContain('p%40ss');
    const one = await call(sys, 'GET', `/events/${event.id}/payloads/${p.id}`, { key: acct.testKey });
    expect(one.body.id).toBe(p.id);
    await Promise.all(receivers.map((r) => r.close()));
    for (const h of hooks) await call(sys, 'DELETE', `/webhooks/${h.id}`, { key: acct.testKey });
  });

  it('an event without webhooks is completed at once', async () => {
    const lonely = await createAccount(sys);
    const event = await publish(sys, lonely.user.id, 'production');
    expect(event.status).toBe('completed');
    expect(event.pending_urls).toEqual([]);
  });
});
