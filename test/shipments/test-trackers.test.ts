import EasyPostClient from '@easypost/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhook } from '../support/events';
import { call, createAccount } from '../support/http';
import { eventually, startReceiver } from '../support/receiver';
import { endShipper, shipment } from '../support/shipping';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;
const verifier: any = new EasyPostClient('unused');

beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

describe('test-mode trackers', () => {
  it('a purchase announces tracker.created, then the tracker advances to delivered, each event signed', async () => {
    const acct = await createAccount(sys, { end_shipper_enabled: true });
    const receiver = await startReceiver();
    await webhook(sys, acct.testKey, receiver.url, { webhook_secret: 'tracker-secret' });
    const es = await endShipper(sys, acct.testKey);
    const shp = await shipment(sys, acct.testKey);
    const bought = await call(sys, 'POST', `/shipments/${shp.id}/buy`, { key: acct.testKey, body: { rate: { id: shp.rates[0].id }, end_shipper_id: es.id } });
    expect(bought.status).toBe(200);

    // Delivery is at least once: a repeat (an attempt that timed out on a busy machine after
    // the receiver had it) is the same event again, so count distinct events.
    const deliveries = await eventually(async () => {
      const firsts = receiver.deliveries.filter((d, i, all) => all.findIndex((o) => o.json?.id === d.json?.id) === i);
      return firsts.length >= 4 ? firsts : undefined;
    }, 30_000, 'four distinct tracker events');
    const events = deliveries.map((d) => verifier.Utils.validateWebhook(d.body, d.headers, 'tracker-secret'));
    expect(events.map((e: any) => e.description)).toEqual(['tracker.created', 'tracker.updated', 'tracker.updated', 'tracker.updated']);
    expect(events.map((e: any) => e.result.status)).toEqual(['pre_transit', 'in_transit', 'out_for_delivery', 'delivered']);
    expect(events.slice(1).map((e: any) => e.previous_attributes.status)).toEqual(['pre_transit', 'in_transit', 'out_for_delivery']);
    for (const e of events) expect(e.result).toMatchObject({ object: 'Tracker', id: bought.body.tracker.id, shipment_id: shp.id, weight: 15 });
    // The signed body carries the weight as 15.0, as the real service writes it.
    expect(deliveries[0]!.body.toString()).toContain('"weight":15.0');

    const now = await call(sys, 'GET', `/shipments/${shp.id}`, { key: acct.testKey });
    expect(now.body.tracker.status).toBe('delivered');
    const listed = await call(sys, 'GET', '/events?page_size=10', { key: acct.testKey });
    expect(listed.body.events.map((e: any) => e.description)).toEqual(['tracker.updated', 'tracker.updated', 'tracker.updated', 'tracker.created']);
    await receiver.close();
  });

  it('production trackers do not advance by themselves', async () => {
    const acct = await createAccount(sys, { end_shipper_enabled: true, balance: '50' });
    const receiver = await startReceiver();
    await webhook(sys, acct.prodKey, receiver.url);
    const es = await endShipper(sys, acct.prodKey);
    const shp = await shipment(sys, acct.prodKey);
    const bought = await call(sys, 'POST', `/shipments/${shp.id}/buy`, { key: acct.prodKey, body: { rate: { id: shp.rates[0].id }, end_shipper_id: es.id } });
    await receiver.waitFor(1);
    // No workflow moves it: the purchase started none (a test-mode purchase starts test-tracker-<id>).
    const client = await sys.temporal();
    await expect(client.workflow.getHandle(`test-tracker-${bought.body.tracker.id}`).describe()).rejects.toThrow(/not found/i);
    expect(new Set(receiver.deliveries.map((d) => d.json.description))).toEqual(new Set(['tracker.created']));
    await receiver.close();
  });
});
