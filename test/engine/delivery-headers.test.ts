import EasyPostClient from '@easypost/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStatus, publish, webhook } from '../support/events';
import { type Account, call, createAccount } from '../support/http';
import { type Delivery, startReceiver } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

// What the receiver is told besides the signatures (docs/api.md "Delivery headers"), and
// that the attempt log says the same. Test timings: 4 attempts, retries after 300/600/900 ms.
let sys: TestSystem;
let acct: Account;
const easypost: any = new EasyPostClient('unused');
const secret = 'headers-secret';

beforeAll(async () => {
  sys = await startSystem();
  acct = await createAccount(sys);
});
afterAll(() => sys.close());

const told = (d: Delivery) => ({
  type: d.headers['x-shiphook-event-type'],
  attempt: d.headers['x-shiphook-attempt'],
  deliveryId: d.headers['x-shiphook-delivery-id'] as string,
});
const payloadsOf = async (eventId: string) => (await call(sys, 'GET', `/events/${eventId}/payloads`, { key: acct.testKey })).body.payloads as any[];

describe('delivery headers', () => {
  it('attempts 1, 2, 3 of a retried delivery carry their number, the type and their Payload id, as the Payloads record; a replay counts from 1 again', async () => {
    const receiver = await startReceiver((_d, i, res) => res.writeHead(i < 2 ? 500 : 200).end());
    await webhook(sys, acct.testKey, receiver.url, { webhook_secret: secret });
    const event = await publish(sys, acct.user.id, 'test');
    await eventStatus(sys, acct.testKey, event.id, 'completed');
    const sent = receiver.deliveries.slice(0, 3);
    expect(sent.map((d) => told(d).attempt)).toEqual(['1', '2', '3']);
    for (const d of sent) {
      expect(told(d).type).toBe(event.description);
      expect(d.headers['webhook-id']).toBe(event.id); // dedupe stays by the event id
      expect(easypost.Utils.validateWebhook(d.body, d.headers, secret).id).toBe(event.id);
    }
    expect(new Set(sent.map((d) => told(d).deliveryId)).size).toBe(3);

    const payloads = await payloadsOf(event.id);
    expect(payloads).toHaveLength(3);
    for (const d of sent) {
      const { attempt, deliveryId } = told(d);
      // The delivery id is the Payload's: support fetches exactly that request with it.
      const one = await call(sys, 'GET', `/events/${event.id}/payloads/${deliveryId}`, { key: acct.testKey });
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ id: deliveryId, attempt: Number(attempt), response_code: attempt === '3' ? 200 : 500 });
      expect(one.body.request_headers).toMatchObject({ 'X-Shiphook-Attempt': attempt, 'X-Shiphook-Delivery-Id': deliveryId, 'X-Shiphook-Event-Type': event.description });
    }

    const replay = await call(sys, 'POST', `/events/${event.id}/replay`, { key: acct.testKey, body: { all: true } });
    expect(replay.status).toBe(200);
    const [, , , again] = await receiver.waitFor(4);
    expect(told(again!)).toMatchObject({ attempt: '1', type: event.description });
    expect(again!.headers['webhook-id']).toBe(event.id);
    await eventStatus(sys, acct.testKey, event.id, 'completed');
    const replayed = (await payloadsOf(event.id)).find((p) => p.id === told(again!).deliveryId);
    expect(replayed).toMatchObject({ attempt: 1, response_code: 200 });
    await receiver.close();
  });

  it('a test event of a chosen type says that type', async () => {
    const own = await createAccount(sys);
    const receiver = await startReceiver();
    const hook = await webhook(sys, own.testKey, receiver.url);
    const res = await call(sys, 'POST', `/webhooks/${hook.id}/test`, { key: own.testKey, body: { description: 'batch.created' } });
    expect(res.status).toBe(201);
    const [d] = await receiver.waitFor(1);
    expect(told(d!)).toMatchObject({ type: 'batch.created', attempt: '1' });
    expect(d!.headers['x-shiphook-test']).toBe('true');
    await eventStatus(sys, own.testKey, res.body.id, 'completed');
    const payloads = (await call(sys, 'GET', `/events/${res.body.id}/payloads`, { key: own.testKey })).body.payloads;
    expect(payloads).toEqual([expect.objectContaining({ id: told(d!).deliveryId, attempt: 1 })]);
    await receiver.close();
  });
});
