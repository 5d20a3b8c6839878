import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookUrlsAttr } from '../../src/engine/contract';
import { eventStatus, publish, webhook } from '../support/events';
import { call, createAccount } from '../support/http';
import { startReceiver, status, type Receiver } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;
let secretHook: Receiver;
let otherHook: Receiver;

beforeAll(async () => {
  sys = await startSystem();
  // Fails once, so a retry (an activity with a summary and a failure message) reaches Temporal.
  secretHook = await startReceiver((_d, i, res) => res.writeHead(i === 0 ? 500 : 200).end());
  otherHook = await startReceiver(status(200));
});
afterAll(async () => {
  await Promise.all([secretHook.close(), otherHook.close(), sys.close()]);
});

describe('credentials in webhook URLs', () => {
  it('are masked wherever another party or an operator reads the URL', async () => {
    const acct = await createAccount(sys);
    const hostAndPath = secretHook.url.slice('http://'.length);
    const url = `http://TOKENONLY@${hostAndPath}?key=QUERYSECRET`;
    await webhook(sys, acct.testKey, url);
    await webhook(sys, acct.testKey, otherHook.url);

    // The owner: no user-info, the query string as given.
    const listed = (await call(sys, 'GET', '/webhooks', { key: acct.testKey })).body.webhooks.map((w: any) => w.url);
    expect(listed).toContain(`http://***@${hostAndPath}?key=QUERYSECRET`);

    const event = await publish(sys, acct.user.id, 'test');
    await eventStatus(sys, acct.testKey, event.id, 'completed');
    // The endpoint itself still gets its credentials.
    expect(secretHook.deliveries[0]!.headers.authorization).toBe(`Basic ${Buffer.from('TOKENONLY:').toString('base64')}`);

    // Another receiver of the account reads pending_urls / completed_urls.
    const seenByOther = otherHook.deliveries.map((d) => d.body.toString('utf8')).join('\n');
    expect(seenByOther).toContain(`http://***@${hostAndPath}?***`);
    expect(seenByOther).not.toMatch(/TOKENONLY|QUERYSECRET/);

    // Payloads (the owner's): no user-info.
    const payloads = (await call(sys, 'GET', `/events/${event.id}/payloads`, { key: acct.testKey })).body.payloads as any[];
    expect(payloads.length).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(payloads)).not.toContain('TOKENONLY');

    // Temporal: search attributes, activity summaries, failure messages.
    const handle = (await sys.temporal()).workflow.getHandle(event.id);
    const attrs = (await handle.describe()).typedSearchAttributes.get(WebhookUrlsAttr);
    expect(attrs).toContain(`http://***@${hostAndPath}?***`);
    const history = readable(await handle.fetchHistory());
    expect(history).toContain('***@');
    expect(history).not.toMatch(/TOKENONLY|QUERYSECRET/);
  });
});

/** The history as text, with every payload (inputs, results, summaries, search attributes: base64 `data`) decoded. */
function readable(value: unknown): string {
  return JSON.stringify(value, (k, v) => (k === 'data' && typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v));
}
