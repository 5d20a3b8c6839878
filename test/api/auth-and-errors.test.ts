import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { startSystem, type TestSystem } from '../support/system';
import { TEST_ENV } from '../support/test-config';

let sys: TestSystem;
let acct: Account;

beforeAll(async () => {
  sys = await startSystem();
  acct = await createAccount(sys);
});
afterAll(() => sys.close());

describe('authentication (the API specification, 5)', () => {
  it('accepts Basic base64(key:) and Bearer key', async () => {
    const basic = await call(sys, 'GET', '/users', { key: acct.prodKey });
    expect(basic.status).toBe(200);
    expect(basic.body.id).toBe(acct.user.id);
    const bearer = await call(sys, 'GET', '/users', { headers: { authorization: `Bearer ${acct.prodKey}` } });
    expect(bearer.status).toBe(200);
    expect(bearer.body.id).toBe(acct.user.id);
  });

  it.each([
    ['no header', {}],
    ['unknown key', { authorization: 'Bearer shk_prod_0000' }],
    ['garbage scheme', { authorization: 'Digest abc' }],
    ['empty basic user', { authorization: 'Basic ' + Buffer.from(':x').toString('base64') }],
  ])('401 UNAUTHORIZED for %s', async (_name, headers) => {
    const res = await call(sys, 'GET', '/users', { headers });
    expect(res.status).toBe(401);
    expect(errorOf(res).code).toBe('UNAUTHORIZED');
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
  });

  it('403 MODE.UNAUTHORIZED for a production-only operation with a test key', async () => {
    for (const path of ['/users', '/api_keys']) {
      const res = await call(sys, 'GET', path, { key: acct.testKey });
      expect(res.status).toBe(403);
      expect(errorOf(res).code).toBe('MODE.UNAUTHORIZED');
    }
  });
});

describe('error bodies (the API specification, 7)', () => {
  it('unknown route → 404 NOT_FOUND JSON with string errors', async () => {
    const res = await call(sys, 'GET', '/no_such_thing', { key: acct.prodKey });
    expect(res.status).toBe(404);
    const err = errorOf(res);
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toBeTruthy();
    expect(typeof err.errors[0]).toBe('string');
  });

  it('unknown path outside /v2 → 404 JSON', async () => {
    const res = await call(sys, 'GET', '/../nowhere');
    expect(res.status).toBe(404);
    expect(errorOf(res).code).toBe('NOT_FOUND');
  });

  it('wrong method → 405 with Allow', async () => {
    const res = await call(sys, 'PUT', '/api_keys', { key: acct.prodKey });
    expect(res.status).toBe(405);
    expect(errorOf(res).code).toBe('METHOD_NOT_ALLOWED');
    expect(res.headers.get('allow')).toContain('GET');
  });

  it('malformed JSON → 400 BAD_REQUEST', async () => {
    const res = await call(sys, 'PATCH', '/users', { key: acct.prodKey, rawBody: '{"user": ' });
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe('BAD_REQUEST');
  });

  it('a body over 1 MB → 400 BAD_REQUEST, not 500', async () => {
    const res = await call(sys, 'PATCH', '/users', { key: acct.prodKey, rawBody: JSON.stringify({ user: { name: 'x'.repeat(1_100_000) } }) });
    expect(res.status).toBe(400);
    expect(errorOf(res).message).toMatch(/too large/);
  });

  it.each(['[1,2]', '"user"', '5', 'null'])('well-formed JSON of the wrong shape (%s) → 422 with a field error (the API specification, 7), and nothing changes', async (rawBody) => {
    const res = await call(sys, 'PATCH', '/users', { key: acct.prodKey, rawBody });
    expect(res.status).toBe(422);
    expect(errorOf(res)).toEqual({ code: 'PARAMETER.REQUIRED', message: 'Missing required parameter.', errors: [{ field: 'user', message: 'cannot be blank' }] });
    const hook = await call(sys, 'POST', '/webhooks', { key: acct.testKey, rawBody });
    expect(hook.status).toBe(422);
    expect(errorOf(hook).errors).toEqual([{ field: 'webhook', message: 'cannot be blank' }]);
    const key = await call(sys, 'POST', '/api_keys', { key: acct.prodKey, rawBody });
    expect(key.status).toBe(422);
    expect(errorOf(key).errors).toEqual([{ field: 'body', message: 'must be a JSON object' }]);
  });

  it('a field of the wrong type → 422 with the field named', async () => {
    const res = await call(sys, 'PATCH', '/users', { key: acct.prodKey, body: { user: { name: ['x'] } } });
    expect(res.status).toBe(422);
    expect(errorOf(res)).toEqual({ code: 'USER.INVALID', message: 'The user could not be updated.', errors: [{ field: 'user.name', message: 'must be a string' }] });
    const wrapper = await call(sys, 'PATCH', '/users', { key: acct.prodKey, body: { user: 'x' } });
    expect(errorOf(wrapper).errors).toEqual([{ field: 'user', message: 'must be an object' }]);
  });

  it('missing wrapper object → 422 PARAMETER.REQUIRED with a field error', async () => {
    const res = await call(sys, 'PATCH', '/users', { key: acct.prodKey, body: {} });
    expect(res.status).toBe(422);
    expect(errorOf(res)).toEqual({ code: 'PARAMETER.REQUIRED', message: 'Missing required parameter.', errors: [{ field: 'user', message: 'cannot be blank' }] });
  });

  it('tolerates a doubled slash and Content-Type on a GET without body', async () => {
    const res = await fetch(`${sys.baseUrl}//users`, {
      headers: { authorization: `Bearer ${acct.prodKey}`, 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    expect((await res.json()).id).toBe(acct.user.id);
  });
});

describe('operator API', () => {
  it('refuses a wrong admin token with 401', async () => {
    const res = await call(sys, 'POST', '/admin/v1/users', { headers: { authorization: 'Bearer nope' }, body: { name: 'x', email: 'x@example.com' } });
    expect(res.status).toBe(401);
    expect(errorOf(res).code).toBe('UNAUTHORIZED');
  });

  it('validates the new user with field errors and leaves nothing behind', async () => {
    const res = await call(sys, 'POST', '/admin/v1/users', {
      headers: { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` },
      body: { name: '', email: 'not-an-email', referral_customer: 'yes' },
    });
    expect(res.status).toBe(422);
    const err = errorOf(res);
    expect(err.code).toBe('USER.INVALID');
    expect(err.errors.map((e: any) => e.field).sort()).toEqual(['email', 'name', 'referral_customer']);
  });

  it('refuses a duplicate email', async () => {
    const res = await call(sys, 'POST', '/admin/v1/users', {
      headers: { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` },
      body: { name: 'Again', email: acct.user.email.toUpperCase() },
    });
    expect(res.status).toBe(422);
    expect(errorOf(res).errors[0]).toEqual({ field: 'email', message: 'is already taken' });
  });

  it('refuses a duplicate email with letters beyond ASCII as taken, not with a 500 (a fuzzer finding)', async () => {
    const admin = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };
    const email = `Über-${Date.now()}@Straße.example`;
    expect((await call(sys, 'POST', '/admin/v1/users', { headers: admin, body: { name: 'Ü', email } })).status).toBe(201);
    const again = await call(sys, 'POST', '/admin/v1/users', { headers: admin, body: { name: 'Ü', email } });
    expect(again.status).toBe(422);
    expect(errorOf(again).errors[0]).toEqual({ field: 'email', message: 'is already taken' });
  });
});
