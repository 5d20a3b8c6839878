import EasyPostClient from '@easypost/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { ADDRESS, endShipper } from '../support/shipping';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;
let acct: Account;

beforeAll(async () => {
  sys = await startSystem();
  acct = await createAccount(sys, { end_shipper_enabled: true });
});
afterAll(() => sys.close());

const post = (address: unknown, key = acct.testKey) => call(sys, 'POST', '/end_shippers', { key, body: { address } });

describe('EndShippers', () => {
  it('creates with normalised values and +00:00 timestamps', async () => {
    const res = await post(ADDRESS);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^es_[0-9a-f]{32}$/),
      object: 'EndShipper',
      mode: 'test',
      name: 'JACK SPARROW',
      company: 'BLACK PEARL LLC',
      street1: '388 TOWNSEND ST',
      street2: 'APT 20',
      city: 'SAN FRANCISCO',
      state: 'CA',
      zip: '94107-1670',
      country: 'US',
      phone: '4155550100',
      email: 'jack@example.com',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/),
      updated_at: expect.stringMatching(/\+00:00$/),
    });
  });

  it('keeps street2 empty or null as given; company alone is enough', async () => {
    const empty = await post({ ...ADDRESS, street2: '' });
    expect(empty.body.street2).toBe('');
    const none = await post({ ...ADDRESS, street2: null, name: undefined });
    expect(none.body).toMatchObject({ street2: null, name: null, company: 'BLACK PEARL LLC' });
  });

  it('requires every required field, with one field error each', async () => {
    const res = await post({ country: 'US' });
    expect(res.status).toBe(422);
    const err = errorOf(res);
    expect(err.code).toBe('ADDRESS.PARAMETERS.INVALID');
    expect(err.errors.map((e: any) => e.field).sort()).toEqual(['address.city', 'address.email', 'address.name', 'address.phone', 'address.state', 'address.street1', 'address.zip']);
    const missing = await call(sys, 'POST', '/end_shippers', { key: acct.testKey, body: {} });
    expect(errorOf(missing).code).toBe('PARAMETER.REQUIRED');
  });

  it('country: two letters (ADDRESS.COUNTRY.INVALID), and US only', async () => {
    const bad = await post({ ...ADDRESS, country: 'USA' });
    expect(bad.status).toBe(422);
    expect(errorOf(bad).code).toBe('ADDRESS.COUNTRY.INVALID');
    const ca = await post({ ...ADDRESS, country: 'CA' });
    expect(errorOf(ca)).toMatchObject({ code: 'ADDRESS.PARAMETERS.INVALID', errors: [{ field: 'address.country', message: expect.stringMatching(/US/) }] });
  });

  it('control characters → ADDRESS.PARAMETERS.INVALID_CHARACTER; bad zip, state, phone, email → field errors', async () => {
    const ctl = await post({ ...ADDRESS, street1: '388 Townsend\u0007 St' });
    expect(errorOf(ctl)).toMatchObject({ code: 'ADDRESS.PARAMETERS.INVALID_CHARACTER', errors: [{ field: 'address.street1' }] });
    const bad = await post({ ...ADDRESS, zip: '941', state: 'Atlantis', phone: '12', email: 'nope' });
    expect(errorOf(bad).errors.map((e: any) => e.field).sort()).toEqual(['address.email', 'address.phone', 'address.state', 'address.zip']);
  });

  it('PUT requires the whole address again and replaces it', async () => {
    const es = await endShipper(sys, acct.testKey);
    const partial = await call(sys, 'PUT', `/end_shippers/${es.id}`, { key: acct.testKey, body: { address: { name: 'Only Name' } } });
    expect(partial.status).toBe(422);
    const res = await call(sys, 'PUT', `/end_shippers/${es.id}`, { key: acct.testKey, body: { address: { ...ADDRESS, city: 'Oakland', zip: '94607' } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: es.id, city: 'OAKLAND', zip: '94607' });
    expect((await call(sys, 'GET', `/end_shippers/${es.id}`, { key: acct.testKey })).body.city).toBe('OAKLAND');
  });

  it('lists newest first with has_more, page_size and before_id/after_id', async () => {
    const a = await createAccount(sys, { end_shipper_enabled: true });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await endShipper(sys, a.testKey)).id);
    const page = await call(sys, 'GET', '/end_shippers?page_size=2', { key: a.testKey });
    expect(page.body.end_shippers.map((e: any) => e.id)).toEqual([ids[2], ids[1]]);
    expect(page.body.has_more).toBe(true);
    const rest = await call(sys, 'GET', `/end_shippers?before_id=${ids[1]}`, { key: a.testKey });
    expect(rest.body).toMatchObject({ end_shippers: [{ id: ids[0] }], has_more: false });
    const newer = await call(sys, 'GET', `/end_shippers?after_id=${ids[0]}`, { key: a.testKey });
    expect(newer.body.end_shippers.map((e: any) => e.id)).toEqual([ids[2], ids[1]]);
    expect((await call(sys, 'GET', '/end_shippers?page_size=101', { key: a.testKey })).status).toBe(422);
    expect((await call(sys, 'GET', `/end_shippers?before_id=${ids[1]}&after_id=${ids[0]}`, { key: a.testKey })).status).toBe(422);
    expect((await call(sys, 'GET', '/end_shippers', { key: a.prodKey })).body.end_shippers).toEqual([]);
  });

  it('is refused without the EndShipper capability, and scoped by user and mode', async () => {
    const plain = await createAccount(sys);
    const res = await post(ADDRESS, plain.testKey);
    expect(res.status).toBe(403);
    expect(errorOf(res)).toMatchObject({ code: 'FORBIDDEN', message: expect.stringMatching(/EndShipper/) });
    const es = await endShipper(sys, acct.testKey);
    expect((await call(sys, 'GET', `/end_shippers/${es.id}`, { key: acct.prodKey })).status).toBe(404);
    const other = await createAccount(sys, { end_shipper_enabled: true });
    expect((await call(sys, 'GET', `/end_shippers/${es.id}`, { key: other.testKey })).status).toBe(404);
  });

  it('works through @easypost/api: create, retrieve, update, all', async () => {
    const client: any = new EasyPostClient(acct.testKey, { baseUrl: `${sys.baseUrl}/` });
    const created = await client.EndShipper.create(ADDRESS);
    expect(created.id).toMatch(/^es_/);
    expect((await client.EndShipper.retrieve(created.id)).city).toBe('SAN FRANCISCO');
    const updated = await client.EndShipper.update(created.id, { ...ADDRESS, name: 'Will Turner' });
    expect(updated.name).toBe('WILL TURNER');
    const all = await client.EndShipper.all({ page_size: 1 });
    expect(all.end_shippers).toHaveLength(1);
    expect(all.has_more).toBe(true);
  });
});
