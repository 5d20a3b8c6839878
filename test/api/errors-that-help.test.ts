import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createAccount, errorOf, type Account, type Res } from '../support/http';
import { startSystem, type TestSystem } from '../support/system';
import { TEST_ENV } from '../support/test-config';

const ADMIN = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };

let sys: TestSystem;
let acct: Account;
const answers: Res[] = [];
/** Every answer of this file is kept: none may use the internal word for the API specification. */
const kept = async (res: Promise<Res>) => {
  const r = await res;
  answers.push(r);
  return r;
};
const webhookCount = async () => (await call(sys, 'GET', '/webhooks', { key: acct.testKey })).body.webhooks.length;

beforeAll(async () => {
  sys = await startSystem();
  acct = await createAccount(sys);
});
afterAll(async () => {
  await sys.close();
});

describe('errors that help', () => {
  it("a body sent without Content-Type: application/json is refused with a message that names the header, and nothing is created", async () => {
    const body = JSON.stringify({ webhook: { url: 'https://example.com/form-hook' } });
    // curl -d sends this type; a hand-built request may send none.
    for (const type of ['application/x-www-form-urlencoded', undefined]) {
      const res = await kept(call(sys, 'POST', '/webhooks', { key: acct.testKey, rawBody: body, headers: type ? { 'content-type': type } : { 'content-type': '' } }));
      expect(res.status).toBe(400);
      const err = errorOf(res);
      expect(err).toMatchObject({ code: 'BAD_REQUEST', message: 'Send the body as JSON with `Content-Type: application/json`.' });
      expect(err.errors).toEqual([type ? `The request's Content-Type is ${type}.` : 'The request has no Content-Type header.']);
    }
    const operator = await kept(call(sys, 'POST', '/admin/v1/users', { headers: { ...ADMIN, 'content-type': 'text/plain' }, rawBody: '{"name":"x"}' }));
    expect(errorOf(operator).message).toMatch(/Content-Type: application\/json/);
    expect(await webhookCount()).toBe(0);
    // What the official node client sends on a GET (the JSON type, no body) is not a body.
    expect((await call(sys, 'GET', '/webhooks', { key: acct.testKey, headers: { 'content-type': 'application/json' } })).status).toBe(200);
  });

  it('lists a field error once, even when several checks of the field fail', async () => {
    for (const size of ['abc', '1000', '-1']) {
      const res = await kept(call(sys, 'GET', `/events?page_size=${size}`, { key: acct.testKey }));
      expect(res.status).toBe(422);
      expect(errorOf(res).errors).toEqual([{ field: 'page_size', message: 'must be an integer from 1 to 100' }]);
    }
    // A list without filters: its parameters are the page's, named in the message.
    const endShippers = await kept(call(sys, 'GET', '/end_shippers?page_size=0', { key: acct.testKey }));
    expect(endShippers.status).toBe(422);
    expect(errorOf(endShippers).message).toBe('Invalid pagination parameter: page_size must be an integer from 1 to 100.');
  });

  it('names fields as the client sent them, wrapper included, for schema and rule failures alike', async () => {
    const blank = await kept(call(sys, 'POST', '/webhooks', { key: acct.testKey, body: { webhook: {} } }));
    expect(errorOf(blank).errors).toEqual([{ field: 'webhook.url', message: 'cannot be blank' }]);
    const ftp = await kept(call(sys, 'POST', '/webhooks', { key: acct.testKey, body: { webhook: { url: 'ftp://example.com/x' } } }));
    expect(errorOf(ftp).errors).toEqual([{ field: 'webhook.url', message: 'must use https' }]);
    const header = await kept(call(sys, 'POST', '/webhooks', { key: acct.testKey, body: { webhook: { url: 'https://example.com/h', custom_headers: [{ name: 'Host', value: 'x' }] } } }));
    expect(errorOf(header).errors[0]).toMatchObject({ field: 'webhook.custom_headers[0].name' });
    const user = await kept(call(sys, 'PATCH', '/users', { key: acct.prodKey, body: { user: { email: 'new@example.com' } } }));
    expect(errorOf(user).errors).toContainEqual({ field: 'user.current_password', message: expect.any(String) });
    // The wrapper itself, and top-level bodies, are named as they are.
    const none = await kept(call(sys, 'POST', '/webhooks', { key: acct.testKey, body: {} }));
    expect(errorOf(none).errors).toEqual([{ field: 'webhook', message: 'cannot be blank' }]);
    const mode = await kept(call(sys, 'POST', '/api_keys', { key: acct.prodKey, body: { mode: 'sideways' } }));
    expect(errorOf(mode).errors[0]).toMatchObject({ field: 'mode' });
    expect(await webhookCount()).toBe(0);
  });

  it('a 405 names the full path with its base', async () => {
    const caller = await kept(call(sys, 'POST', '/webhooks/hook_0123456789abcdef0123456789abcdef', { key: acct.testKey }));
    expect(caller.status).toBe(405);
    expect(errorOf(caller).message).toBe('Method not supported for /v2/webhooks/:id; use GET, PATCH, PUT, DELETE.');
    const operator = await kept(call(sys, 'DELETE', '/admin/v1/replays/replay_0123456789abcdef0123456789abcdef', { headers: ADMIN }));
    expect(errorOf(operator).message).toBe('Method not supported for /admin/v1/replays/:id; use GET.');
  });

  it('no answer above uses the internal word for the API specification', () => {
    expect(answers.length).toBeGreaterThan(10);
    expect(answers.map((a) => JSON.stringify(a.body)).filter((b) => /\bseeds?\b/i.test(b))).toEqual([]);
  });
});
