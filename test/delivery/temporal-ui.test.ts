import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStatusAttr, EventTypeAttr, ModeAttr, UserIdAttr, WebhookUrlsAttr } from '../../src/temporal/search-attributes';
import { eventStatus, publish, webhook } from '../support/events';
import { createAccount } from '../support/http';
import { eventually, startReceiver } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;
let client: Client;

beforeAll(async () => {
  sys = await startSystem();
  client = await sys.temporal();
});
afterAll(async () => {
  await sys.close();
});

describe('operators in the Temporal UI', () => {
  it('find an event’s workflow by its id and filter by type, user, mode and status', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver();
    const secretUrl = receiver.url.replace('http://', 'http://bob:topsecret@');
    await webhook(sys, acct.testKey, secretUrl);
    const event = await publish(sys, acct.user.id, 'test', { description: 'tracker.created' });
    await eventStatus(sys, acct.testKey, event.id, 'completed');

    const handle = client.workflow.getHandle(event.id);
    expect(await handle.result()).toBe('completed');
    const described = await handle.describe();
    expect(described.type).toBe('deliverEvent');
    const attrs = described.typedSearchAttributes;
    expect(attrs.get(EventTypeAttr)).toBe('tracker.created');
    expect(attrs.get(UserIdAttr)).toBe(acct.user.id);
    expect(attrs.get(ModeAttr)).toBe('test');
    expect(attrs.get(EventStatusAttr)).toBe('completed');
    expect(attrs.get(WebhookUrlsAttr)).toEqual([secretUrl.replace('bob:topsecret@', '***@')]);

    const query = `ShiphookEventType = "tracker.created" AND ShiphookUserId = "${acct.user.id}" AND ShiphookMode = "test" AND ShiphookEventStatus = "completed"`;
    const ids = await eventually(async () => {
      const found: string[] = [];
      for await (const wf of client.workflow.list({ query })) found.push(wf.workflowId);
      return found.length ? found : undefined;
    }, 15_000, 'visibility');
    expect(ids).toEqual([event.id]);

    // Each attempt's target (masked) is in the history, never the password.
    // Payloads are base64 in the history: decoded, or the assertion below could never fail.
    const history = JSON.stringify(await handle.fetchHistory(), (k, v) => (k === 'data' && typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : v));
    expect(history).toContain('***@');
    expect(history).not.toContain('topsecret');
    await receiver.close();
  });
});
