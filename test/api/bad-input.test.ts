import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, createAccount, errorOf, type Res } from '../support/http';
import { SHIPMENT } from '../support/shipping';
import { startSystem, type TestSystem } from '../support/system';
import { TEST_ENV } from '../support/test-config';

/**
 * Bad input that used to reach PostgreSQL, the stack or the HTTP parser (issue #11,
 * "Bad input"): every class answers 4xx with the API's error body and changes nothing.
 */
let sys: TestSystem;
let acct: Account;
const admin = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };

beforeAll(async () => {
  sys = await startSystem();
  acct = await createAccount(sys, { end_shipper_enabled: true, referral_customer: true });
});
afterAll(() => sys.close());

function expectRefused(res: Res, status: number, code: string, field?: string) {
  expect(res.status).toBe(status);
  const err = errorOf(res);
  expect(err.code).toBe(code);
  if (field) expect(err.errors.map((e: any) => e.field)).toContain(field);
}

const user = async () => (await call(sys, 'GET', '/users', { key: acct.prodKey })).body;
const deep = (depth: number) => JSON.parse('['.repeat(depth) + ']'.repeat(depth));

describe('NUL characters never reach PostgreSQL', () => {
  it('user name and phone, webhook secret, shipment address and reference → 422', async () => {
    const before = await user();
    expectRefused(await call(sys, 'PATCH', '/users', { key: acct.prodKey, body: { user: { name: 'a\u0000b' } } }), 422, 'USER.INVALID', 'user.name');
    expectRefused(await call(sys, 'PATCH', '/users', { key: acct.prodKey, body: { user: { phone_number: '555\u0000' } } }), 422, 'USER.INVALID', 'user.phone_number');
    expect(await user()).toEqual(before);
    expectRefused(await call(sys, 'POST', '/webhooks', { key: acct.testKey, body: { webhook: { url: 'https://example.com/h', webhook_secret: 's\u0000' } } }), 422, 'WEBHOOK.INVALID', 'webhook.webhook_secret');
    expect((await call(sys, 'GET', '/webhooks', { key: acct.testKey })).body.webhooks).toEqual([]);
    const from = { ...SHIPMENT.from_address, street1: '1 Main\u0000 St' };
    expectRefused(await call(sys, 'POST', '/shipments', { key: acct.testKey, body: { shipment: { ...SHIPMENT, from_address: from } } }), 422, 'SHIPMENT.INVALID', 'shipment.from_address.street1');
    expectRefused(await call(sys, 'POST', '/shipments', { key: acct.testKey, body: { shipment: { ...SHIPMENT, reference: 'r\u0000' } } }), 422, 'SHIPMENT.INVALID_PARAMS', 'shipment.reference');
    expectRefused(await call(sys, 'POST', '/end_shippers', { key: acct.testKey, body: { address: { name: 'x\u0000' } } }), 422, 'ADDRESS.PARAMETERS.INVALID_CHARACTER', 'address.name');
  });

  it('operator user and event fields → 422', async () => {
    expectRefused(await call(sys, 'POST', '/admin/v1/users', { headers: admin, body: { name: 'N\u0000', email: 'nul@example.com' } }), 422, 'USER.INVALID', 'name');
    const event = { user_id: acct.user.id, mode: 'test', description: 'batch.created', result: { object: 'Batch', note: 'a\u0000' } };
    expectRefused(await call(sys, 'POST', '/admin/v1/events', { headers: admin, body: event }), 422, 'PARAMETER.FORBIDDEN', 'result');
    expectRefused(await call(sys, 'POST', '/admin/v1/events', { headers: admin, body: { ...event, result: { object: 'Batch', ['k\u0000']: 1 } } }), 422, 'PARAMETER.FORBIDDEN', 'result');
    expect((await call(sys, 'GET', '/events', { key: acct.testKey })).body.events).toEqual([]);
  });

  it('a %00 id on /api_keys/:id/enable|disable and DELETE /api_keys/:id → 404, like other resources', async () => {
    for (const [method, path] of [['POST', '/api_keys/%00/enable'], ['POST', '/api_keys/%00/disable'], ['DELETE', '/api_keys/%00'], ['GET', '/webhooks/%00'], ['GET', '/events/%00']]) {
      expectRefused(await call(sys, method!, path!, { key: path!.startsWith('/api_keys') ? acct.prodKey : acct.testKey }), 404, 'NOT_FOUND');
    }
  });
});

describe('lone UTF-16 surrogates', () => {
  it('in result, previous_attributes and addresses → 422', async () => {
    const event = { user_id: acct.user.id, mode: 'test', description: 'batch.created', result: { object: 'Batch' } };
    expectRefused(await call(sys, 'POST', '/admin/v1/events', { headers: admin, body: { ...event, result: { object: 'Batch', x: '\ud800' } } }), 422, 'PARAMETER.FORBIDDEN', 'result');
    expectRefused(await call(sys, 'POST', '/admin/v1/events', { headers: admin, body: { ...event, previous_attributes: { status: 'a\udc00' } } }), 422, 'PARAMETER.FORBIDDEN', 'previous_attributes');
    const to = { ...SHIPMENT.to_address, city: 'San \ud800Francisco' };
    expectRefused(await call(sys, 'POST', '/shipments', { key: acct.testKey, body: { shipment: { ...SHIPMENT, to_address: to } } }), 422, 'SHIPMENT.INVALID', 'shipment.to_address.city');
    expect((await call(sys, 'GET', '/events', { key: acct.testKey })).body.events).toEqual([]);
    // A well-formed pair is fine.
    const ok = await call(sys, 'POST', '/admin/v1/events', { headers: admin, body: { ...event, result: { object: 'Batch', x: '📦' } } });
    expect(ok.status).toBe(201);
  });
});

describe('numbers that overflow their column', () => {
  it.each([9007199254740992, 1e20, '99999999999999999999', '1e5', -1])('recharge_amount %s → 422, balance unchanged', async (value) => {
    const before = await user();
    expectRefused(await call(sys, 'PATCH', '/users', { key: acct.prodKey, body: { user: { recharge_amount: value } } }), 422, 'USER.INVALID', 'user.recharge_amount');
    expect(await user()).toEqual(before);
  });

  it('operator balance → 422; a large valid one is kept', async () => {
    expectRefused(await call(sys, 'POST', '/admin/v1/users', { headers: admin, body: { name: 'Rich', email: 'rich@example.com', balance: 1e20 } }), 422, 'USER.INVALID', 'balance');
    const ok = await call(sys, 'POST', '/admin/v1/users', { headers: admin, body: { name: 'Rich', email: `rich${Date.now()}@example.com`, balance: '999999999.99' } });
    expect(ok.status).toBe(201);
    expect(ok.body.user.balance).toBe('999999999.99000');
  });

  it('parcel weight beyond the maximum → PARCEL.PARAMETERS.INVALID', async () => {
    expectRefused(await call(sys, 'POST', '/shipments', { key: acct.testKey, body: { shipment: { ...SHIPMENT, parcel: { weight: 1e308 } } } }), 422, 'PARCEL.PARAMETERS.INVALID', 'shipment.parcel.weight');
  });
});

describe('deep nesting', () => {
  it('shipment.options and an event result 5,000 deep → 422, no stack overflow', async () => {
    // Written by hand: JSON.stringify itself overflows the stack on such a value.
    const nested = '['.repeat(5000) + ']'.repeat(5000);
    const shipment = JSON.stringify({ shipment: { ...SHIPMENT, options: { a: 'NESTED' } } }).replace('"NESTED"', nested);
    expectRefused(await call(sys, 'POST', '/shipments', { key: acct.testKey, rawBody: shipment }), 422, 'SHIPMENT.OPTIONS.INVALID', 'shipment.options');
    const event = JSON.stringify({ user_id: acct.user.id, mode: 'test', description: 'batch.created', result: { object: 'Batch', a: 'NESTED' } }).replace('"NESTED"', nested);
    expectRefused(await call(sys, 'POST', '/admin/v1/events', { headers: admin, rawBody: event }), 422, 'PARAMETER.FORBIDDEN', 'result');
    // 32 levels are allowed and come back as sent.
    const ok = await call(sys, 'POST', '/shipments', { key: acct.testKey, body: { shipment: { ...SHIPMENT, options: { a: deep(30) } } } });
    expect(ok.status).toBe(201);
    expect(ok.body.options).toEqual({ a: deep(30) });
  });
});

describe('unbounded strings', () => {
  it('a 990 kB phone_number or shipment city → 422', async () => {
    const before = await user();
    expectRefused(await call(sys, 'PATCH', '/users', { key: acct.prodKey, body: { user: { phone_number: '5'.repeat(990_000) } } }), 422, 'USER.INVALID', 'user.phone_number');
    expect(await user()).toEqual(before);
    const to = { ...SHIPMENT.to_address, city: 'x'.repeat(990_000) };
    expectRefused(await call(sys, 'POST', '/shipments', { key: acct.testKey, body: { shipment: { ...SHIPMENT, to_address: to } } }), 422, 'SHIPMENT.INVALID', 'shipment.to_address.city');
  });
});

describe('custom header names that would break or smuggle the request', () => {
  it.each(['Host', 'Content-Length', 'Transfer-Encoding', 'Connection', 'Keep-Alive', 'Upgrade', 'TE', 'Expect', 'Proxy-Authorization', 'content-type', 'User-Agent', 'Authorization'])(
    '%s → WEBHOOK.INVALID on webhook.custom_headers[0].name',
    async (name) => {
      const res = await call(sys, 'POST', '/webhooks', { key: acct.testKey, body: { webhook: { url: 'https://example.com/h', custom_headers: [{ name, value: 'v' }] } } });
      expectRefused(res, 422, 'WEBHOOK.INVALID', 'webhook.custom_headers[0].name');
    },
  );
});

describe('current_password (the API specification, 4.5)', () => {
  it('an account without a password cannot change email or password through the API', async () => {
    const a = await createAccount(sys);
    for (const change of [{ email: 'new@example.com' }, { password: 'a new password' }]) {
      const res = await call(sys, 'PATCH', '/users', { key: a.prodKey, body: { user: change } });
      expectRefused(res, 422, 'USER.INVALID', 'user.current_password');
      expect(errorOf(res).errors[0].message).toMatch(/no password.*operator/);
    }
    const row = await sys.db.selectFrom('users').select(['email', 'password_hash']).where('id', '=', a.user.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ email: a.user.email, password_hash: null });

    // The operator API can; afterwards the account changes them with its current password.
    const email = `set${Date.now()}@example.com`;
    const set = await call(sys, 'PATCH', `/admin/v1/users/${a.user.id}`, { headers: admin, body: { email, password: 'operator set this' } });
    expect(set.status).toBe(200);
    expect(set.body.email).toBe(email);
    const changed = await call(sys, 'PATCH', '/users', { key: a.prodKey, body: { user: { password: 'user chose this', current_password: 'operator set this' } } });
    expect(changed.status).toBe(200);
    // Without a body nothing changes (a fuzzer finding: the document said the body was required).
    const same = await call(sys, 'PATCH', `/admin/v1/users/${a.user.id}`, { headers: admin });
    expect(same.status).toBe(200);
    expect(same.body.email).toBe(email);
    expectRefused(await call(sys, 'PATCH', `/admin/v1/users/${a.user.id}`, { body: { email } }), 401, 'UNAUTHORIZED');
    expectRefused(await call(sys, 'PATCH', '/admin/v1/users/user_%00', { headers: admin, body: { email } }), 404, 'NOT_FOUND');
    expectRefused(await call(sys, 'PATCH', `/admin/v1/users/${a.user.id}`, { headers: admin, body: { password: 'short' } }), 422, 'USER.INVALID', 'password');
  });
});

/** Sends raw bytes and returns what came back, whole. */
function raw(request: string | Buffer): Promise<string> {
  const { port } = new URL(sys.origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

describe("errors of Node's HTTP parser answer the JSON error body", () => {
  it.each([
    ['an unknown method', 'FOO /v2/users HTTP/1.1\r\nHost: x\r\n\r\n', 405, 'METHOD_NOT_ALLOWED'],
    ['a header with NUL', 'GET /v2/users HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n', 400, 'BAD_REQUEST'],
    ['a header with a bare CR', 'GET /v2/users HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n', 400, 'BAD_REQUEST'],
    ['headers over the limit', `GET /v2/users HTTP/1.1\r\nHost: x\r\nX-A: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'BAD_REQUEST'],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 405, 'METHOD_NOT_ALLOWED'],
  ])('%s → a JSON error body', async (_name, request, status, code) => {
    const answer = await raw(request);
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
    expect(head).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(body!).error).toMatchObject({ code, errors: [] });
  });
});
