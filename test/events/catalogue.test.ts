import EasyPostClient from '@easypost/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openapiJson } from '../../src/api/openapi';
import { deliveredExample, EVENT_RESULTS } from '../../src/events/catalogue/results';
import { EVENT_TYPES, type EventType, familyOf } from '../../src/events/types';
import { checkDelivery } from '../support/contract';
import { webhook } from '../support/events';
import { call, createAccount } from '../support/http';
import { eventually, startReceiver } from '../support/receiver';
import { endShipper, shipment } from '../support/shipping';
import { startSystem, type TestSystem } from '../support/system';

/**
 * The event catalogue (src/events/catalogue): a result schema and a realistic example
 * per event type, published as the OpenAPI document's `webhooks`, met by the events
 * shiphook itself sends, and sent by test events.
 */
let sys: TestSystem;
const verifier: any = new EasyPostClient('unused');

beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

const doc = JSON.parse(openapiJson());
const ID_PREFIX: Record<string, RegExp> = {
  batch: /^batch_/, claims: /^clm_/, insurance: /^ins_/, payment: /^pl_/, refund: /^rfnd_/,
  report: /^(shprep|plrep|refrep|trkrep|shpinvrep)_/, scan_form: /^sf_/, 'shipment.invoice': /^shpinv_/, tracker: /^trk_/,
};
/** The types whose object is about one parcel: their results carry its tracking code. */
const PARCEL_FAMILIES = ['tracker', 'shipment.invoice', 'insurance', 'claims', 'refund'];
/** The API specification's test tracking codes, EZ1000000001 to EZ7000000007. */
const TEST_TRACKING_CODE = /^EZ([1-7])00000000\1$/;
/** What a test event sends fresh; the rest of its result is the example verbatim. */
const withoutFresh = ({ mode: _m, created_at: _c, updated_at: _u, ...rest }: Record<string, unknown>) => rest;

describe('the catalogue', () => {
  it('has every event type, each example with the id of its object and, for a parcel, a test tracking code', () => {
    expect(Object.keys(EVENT_RESULTS).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const { result } = EVENT_RESULTS[type].example;
      expect(result.id, type).toMatch(/^[a-z]+_[0-9a-f]{32}$/);
      expect(result.id, type).toMatch(ID_PREFIX[familyOf(type)]!);
      if (PARCEL_FAMILIES.includes(familyOf(type))) expect(result.tracking_code, type).toMatch(TEST_TRACKING_CODE);
    }
    expect(EVENT_RESULTS['scan_form.created'].example.result.tracking_codes).toEqual(expect.arrayContaining([expect.stringMatching(TEST_TRACKING_CODE)]));
  });

  it('has examples that are valid against their schema, in zod and as the document publishes it', () => {
    for (const type of EVENT_TYPES) {
      const { result, example } = EVENT_RESULTS[type];
      expect(result.safeParse(example.result).error, type).toBeUndefined();
      expect(() => checkDelivery(deliveredExample(type)), type).not.toThrow();
    }
  });

  it('keeps results open to more fields, and still refuses a result that is not the object of its type', () => {
    const example = deliveredExample('tracker.updated');
    expect(() => checkDelivery({ ...example, result: { ...example.result, carrier_detail: { origin_location: 'BOSTON MA' } } })).not.toThrow();
    expect(() => checkDelivery({ ...example, result: { ...example.result, id: undefined } })).toThrow(/must have required property 'id'/);
    expect(() => checkDelivery({ ...example, result: deliveredExample('batch.created').result })).toThrow(/contract/);
  });
});

describe('the events shiphook sends', () => {
  it('a bought test shipment\'s tracker events match the catalogue, and every header they carry is documented', async () => {
    const acct = await createAccount(sys, { end_shipper_enabled: true });
    const receiver = await startReceiver();
    await webhook(sys, acct.testKey, receiver.url, { webhook_secret: 'catalogue-secret' });
    const es = await endShipper(sys, acct.testKey);
    const shp = await shipment(sys, acct.testKey);
    const bought = await call(sys, 'POST', `/shipments/${shp.id}/buy`, { key: acct.testKey, body: { rate: { id: shp.rates[0].id }, end_shipper_id: es.id } });
    expect(bought.status).toBe(200);
    const deliveries = await eventually(async () => {
      const types = new Set(receiver.deliveries.map((d) => d.json?.description));
      return types.has('tracker.created') && types.has('tracker.updated') ? receiver.deliveries : undefined;
    }, 30_000, 'tracker.created and tracker.updated');

    const documented = new Set(doc.webhooks['tracker.updated'].post.parameters.map((p: { $ref: string }) => doc.components.parameters[p.$ref.split('/').pop()!].name.toLowerCase()));
    const http = new Set(['host', 'connection', 'content-length', 'content-type', 'accept', 'user-agent']);
    for (const d of deliveries) {
      const event = verifier.Utils.validateWebhook(d.body, d.headers, 'catalogue-secret');
      expect(event.result).toMatchObject({ object: 'Tracker', id: bought.body.tracker.id, tracking_code: bought.body.tracking_code });
      checkDelivery(d.json);
      expect(Object.keys(d.headers).filter((h) => !http.has(h) && !documented.has(h))).toEqual([]);
    }
    await receiver.close();
  });
});

describe('test events', () => {
  it('send the catalogue\'s example of each type: verbatim but for the mode and timestamps, delivered as the document says', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver();
    const hook = await webhook(sys, acct.prodKey, receiver.url);
    const sent = new Map<string, { result: Record<string, unknown>; previous_attributes: unknown }>();
    for (const type of EVENT_TYPES) {
      const before = Math.floor(Date.now() / 1000) * 1000;
      const res = await call(sys, 'POST', `/webhooks/${hook.id}/test`, { key: acct.prodKey, body: { description: type } });
      expect(res.status).toBe(201);
      const { result, previous_attributes } = res.body;
      const example = EVENT_RESULTS[type as EventType].example;
      expect(withoutFresh(result), type).toEqual(withoutFresh(example.result));
      expect(previous_attributes, type).toEqual(example.previous_attributes);
      // Fresh: the caller's mode, updated now, created as long before as in the example.
      expect(result.mode).toBe('production');
      expect(Date.parse(result.updated_at)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(result.updated_at)).toBeLessThanOrEqual(Date.now());
      expect(Date.parse(result.updated_at) - Date.parse(result.created_at), type).toBe(
        Date.parse(String(example.result.updated_at)) - Date.parse(String(example.result.created_at)),
      );
      sent.set(res.body.id, res.body);
    }
    // The catalogue's examples are left as they were.
    expect(EVENT_RESULTS['tracker.updated'].example.result.mode).toBe('test');

    // At least once: count each event once.
    const deliveries = await eventually(async () => {
      const firsts = receiver.deliveries.filter((d, i, all) => all.findIndex((o) => o.json?.id === d.json?.id) === i);
      return firsts.length >= EVENT_TYPES.length ? firsts : undefined;
    }, 30_000, 'a delivery of each test event');
    for (const d of deliveries) {
      expect(d.headers['x-shiphook-test']).toBe('true');
      checkDelivery(d.json);
      expect(d.json.result).toEqual(sent.get(d.json.id)!.result);
    }
    expect(new Set(deliveries.map((d) => d.json.description))).toEqual(new Set(EVENT_TYPES));
    await receiver.close();
  });
});
