import EasyPostClient from '@easypost/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { endShipper, SHIPMENT, shipment } from '../support/shipping';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;
let acct: Account;

const TOP_LEVEL = ['id', 'object', 'created_at', 'updated_at', 'mode', 'status', 'tracking_code', 'reference', 'is_return', 'messages', 'options', 'batch_id', 'batch_status', 'batch_message', 'customs_info', 'from_address', 'to_address', 'return_address', 'buyer_address', 'insurance', 'order_id', 'parcel', 'postage_label', 'rates', 'selected_rate', 'refund_status', 'scan_form', 'tracker', 'forms', 'fees', 'usps_zone'];

beforeAll(async () => {
  sys = await startSystem();
  acct = await createAccount(sys, { end_shipper_enabled: true, balance: '20' });
});
afterAll(() => sys.close());

const buy = (key: string, id: string, body: unknown) => call(sys, 'POST', `/shipments/${id}/buy`, { key, body });

describe('POST /shipments', () => {
  it('creates a shipment with deterministic simulated rates', async () => {
    const a = await shipment(sys, acct.testKey);
    const b = await shipment(sys, acct.testKey);
    expect(Object.keys(a).sort()).toEqual([...TOP_LEVEL].sort());
    expect(a).toMatchObject({ object: 'Shipment', mode: 'test', reference: 'order-42', usps_zone: 9, selected_rate: null, tracker: null });
    expect(a.rates.map((r: any) => [r.carrier, r.service, r.rate])).toEqual(b.rates.map((r: any) => [r.carrier, r.service, r.rate]));
    expect(a.rates[0]).toMatchObject({ object: 'Rate', id: expect.stringMatching(/^rate_/), shipment_id: a.id, currency: 'USD' });
    const near = await shipment(sys, acct.testKey, { to_address: { ...SHIPMENT.to_address, zip: '02111' } });
    expect(near.usps_zone).toBe(1);
    expect(Number(near.rates[0].rate)).toBeLessThan(Number(a.rates[0].rate));
    const heavy = await shipment(sys, acct.testKey, { parcel: { weight: 160 } });
    expect(Number(heavy.rates[0].rate)).toBeGreaterThan(Number(a.rates[0].rate));
    expect((await call(sys, 'GET', `/shipments/${a.id}`, { key: acct.testKey })).body.id).toBe(a.id);
  });

  it('missing addresses → SHIPMENT.INVALID, a bad parcel → PARCEL.PARAMETERS.INVALID', async () => {
    const none = await call(sys, 'POST', '/shipments', { key: acct.testKey, body: {} });
    expect(errorOf(none)).toEqual({ code: 'PARAMETER.REQUIRED', message: 'Missing required parameter.', errors: [{ field: 'shipment', message: 'cannot be blank' }] });
    const noAddr = await call(sys, 'POST', '/shipments', { key: acct.testKey, body: { shipment: { parcel: SHIPMENT.parcel } } });
    expect(noAddr.status).toBe(422);
    expect(errorOf(noAddr)).toMatchObject({ code: 'SHIPMENT.INVALID', errors: [{ field: 'shipment.from_address' }, { field: 'shipment.to_address' }] });
    const noParcel = await call(sys, 'POST', '/shipments', { key: acct.testKey, body: { shipment: { ...SHIPMENT, parcel: undefined } } });
    expect(errorOf(noParcel).code).toBe('PARCEL.PARAMETERS.INVALID');
    const badDims = await call(sys, 'POST', '/shipments', { key: acct.testKey, body: { shipment: { ...SHIPMENT, parcel: { weight: 10, length: 5 } } } });
    expect(errorOf(badDims).code).toBe('PARCEL.PARAMETERS.INVALID');
  });
});

describe('POST /shipments/:id/buy', () => {
  it('buys with an EndShipper: every field of the API specification, postage label, tracker, fees; no end_shipper_id echoed', async () => {
    const es = await endShipper(sys, acct.testKey);
    const shp = await shipment(sys, acct.testKey);
    const res = await buy(acct.testKey, shp.id, { rate: { id: shp.rates[1].id }, end_shipper_id: es.id });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([...TOP_LEVEL].sort());
    expect(res.body).not.toHaveProperty('end_shipper_id');
    expect(res.body.selected_rate.id).toBe(shp.rates[1].id);
    expect(res.body.tracking_code).toMatch(/^SIM/);
    expect(res.body.postage_label.label_url).toMatch(/^https:\/\//);
    expect(res.body.tracker).toMatchObject({ object: 'Tracker', status: 'pre_transit', tracking_code: res.body.tracking_code, shipment_id: shp.id, weight: 15 });
    expect(res.body.fees.map((f: any) => f.type)).toEqual(['LabelFee', 'PostageFee']);
  });

  it('refuses a foreign rate, a second buy, and unknown or other-mode EndShippers', async () => {
    const es = await endShipper(sys, acct.testKey);
    const shp = await shipment(sys, acct.testKey);
    const other = await shipment(sys, acct.testKey);
    const wrongRate = await buy(acct.testKey, shp.id, { rate: { id: other.rates[0].id }, end_shipper_id: es.id });
    expect(errorOf(wrongRate).code).toBe('SHIPMENT.MISSING_RATE');
    const unknownEs = await buy(acct.testKey, shp.id, { rate: { id: shp.rates[0].id }, end_shipper_id: 'es_00000000000000000000000000000000' });
    expect(unknownEs.status).toBe(404);
    const prodEs = await endShipper(sys, acct.prodKey);
    const conflict = await buy(acct.testKey, shp.id, { rate: { id: shp.rates[0].id }, end_shipper_id: prodEs.id });
    expect(conflict.status).toBe(403);
    expect(errorOf(conflict).code).toBe('MODE.CONFLICT');
    const missing = await buy(acct.testKey, shp.id, { rate: { id: shp.rates[0].id } });
    expect(errorOf(missing)).toMatchObject({ code: 'PARAMETER.REQUIRED', errors: [{ field: 'end_shipper_id' }] });
    expect((await buy(acct.testKey, shp.id, { rate: { id: shp.rates[0].id }, end_shipper_id: es.id })).status).toBe(200);
    const again = await buy(acct.testKey, shp.id, { rate: { id: shp.rates[0].id }, end_shipper_id: es.id });
    expect(again.status).toBe(422);
    expect(errorOf(again).code).toBe('SHIPMENT.POSTAGE.EXISTS');
  });

  it('two concurrent buys of one shipment: exactly one succeeds', async () => {
    const es = await endShipper(sys, acct.testKey);
    const shp = await shipment(sys, acct.testKey);
    const results = await Promise.all(Array.from({ length: 4 }, () => buy(acct.testKey, shp.id, { rate: { id: shp.rates[0].id }, end_shipper_id: es.id })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(['SHIPMENT.PURCHASE.IN_PROGRESS', 'SHIPMENT.POSTAGE.EXISTS']).toContain(errorOf(r).code);
    }
    const trackers = await sys.db.selectFrom('trackers').select('id').where('shipment_id', '=', shp.id).execute();
    expect(trackers).toHaveLength(1);
  });

  it('production debits the balance atomically and refuses with 402 when short', async () => {
    const rich = await createAccount(sys, { end_shipper_enabled: true, balance: '100' });
    const es = await endShipper(sys, rich.prodKey);
    const shp = await shipment(sys, rich.prodKey);
    const price = Number(shp.rates[0].rate);
    expect((await buy(rich.prodKey, shp.id, { rate: { id: shp.rates[0].id }, end_shipper_id: es.id })).status).toBe(200);
    const me = await call(sys, 'GET', '/users', { key: rich.prodKey });
    expect(Number(me.body.balance)).toBeCloseTo(100 - price, 5);

    const poor = await createAccount(sys, { end_shipper_enabled: true, balance: '1' });
    const poorEs = await endShipper(sys, poor.prodKey);
    const poorShp = await shipment(sys, poor.prodKey);
    const refused = await buy(poor.prodKey, poorShp.id, { rate: { id: poorShp.rates[0].id }, end_shipper_id: poorEs.id });
    expect(refused.status).toBe(402);
    expect(errorOf(refused).code).toBe('PAYMENT_REQUIRED');
    expect((await call(sys, 'GET', '/users', { key: poor.prodKey })).body.balance).toBe('1.00000');
    const after = await call(sys, 'GET', `/shipments/${poorShp.id}`, { key: poor.prodKey });
    expect(after.body.selected_rate).toBeNull();
    expect(await sys.db.selectFrom('trackers').select('id').where('shipment_id', '=', poorShp.id).execute()).toEqual([]);
  });

  it('works through @easypost/api: Shipment.create and Shipment.buy(id, rate, null, endShipperId)', async () => {
    const client: any = new EasyPostClient(acct.testKey, { baseUrl: `${sys.baseUrl}/` });
    const es = await client.EndShipper.create({ name: 'Client ES', street1: '1 Main St', city: 'Boston', state: 'MA', zip: '02110', country: 'US', phone: '6175550100', email: 'es@example.com' });
    const shp = await client.Shipment.create(SHIPMENT);
    const bought = await client.Shipment.buy(shp.id, shp.lowestRate(), null, es.id);
    expect(bought.selected_rate.id).toBe(shp.lowestRate().id);
    expect(bought.tracker.status).toBe('pre_transit');
    expect(bought.usps_zone).toBe(9);
  });
});
