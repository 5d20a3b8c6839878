import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { startSystem, type TestSystem } from '../support/system';

/**
 * The official Java client (com.easypost:easypost-api-client) updates users and webhooks with
 * PUT: its HttpURLConnection cannot send PATCH. Its requests as it sends them (the recorded
 * tests of EasyPost/easypost-java: src/test/cassettes/user/update.json, webhook/update.json):
 * Bearer auth, Gson's compact JSON, HttpURLConnection's default Accept. The real API answers
 * 200 (users) and 201 (webhooks), as to PATCH.
 */
let sys: TestSystem;
let acct: Account;

beforeAll(async () => {
  sys = await startSystem();
  acct = await createAccount(sys);
});
afterAll(() => sys.close());

/** A request shaped as the Java client's Requestor makes it. */
const java = (method: string, path: string, key: string, body?: unknown) =>
  call(sys, method, path, {
    headers: {
      authorization: `Bearer ${key}`,
      'accept-charset': 'UTF-8',
      'user-agent': 'EasyPost/v2 JavaClient/8.5.0 Java/17.0.13 OS/Linux OSVersion/6.1 OSArch/amd64 Implementation/OpenJDK-64-Bit-Server-VM',
      accept: 'text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2', // HttpURLConnection's own
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { rawBody: JSON.stringify(body) }),
  });

async function hook(extra: Record<string, unknown> = {}) {
  const res = await call(sys, 'POST', '/webhooks', { key: acct.testKey, body: { webhook: { url: `https://example.com/java-${Math.random()}`, ...extra } } });
  expect(res.status).toBe(201);
  return res.body.id as string;
}
const secretOf = async (id: string) => (await sys.db.selectFrom('webhooks').select('webhook_secret').where('id', '=', id).executeTakeFirstOrThrow()).webhook_secret;

describe('PUT, as the official Java client updates', () => {
  it('PUT /v2/users/:id renames a child: 200 and the user, as PATCH; a child still takes only its name', async () => {
    const child = await java('POST', '/users', acct.prodKey, { user: { name: 'Test User' } });
    expect(child.status).toBe(201);
    const renamed = await java('PUT', `/users/${child.body.id}`, acct.prodKey, { user: { name: 'New Name' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ object: 'User', id: child.body.id, name: 'New Name', parent_id: acct.user.id });
    expect((await java('GET', `/users/${child.body.id}`, acct.prodKey)).body.name).toBe('New Name');
    // A child's update reads only its name (schemaFor), at PUT as at PATCH.
    const email = await java('PUT', `/users/${child.body.id}`, acct.prodKey, { user: { email: 'child@example.com' } });
    const patched = await call(sys, 'PATCH', `/users/${child.body.id}`, { key: acct.prodKey, body: { user: { email: 'child@example.com' } } });
    expect(email.status).toBe(200);
    expect(email.body).toEqual(patched.body);
    expect(email.body).not.toHaveProperty('email');
    const blank = await java('PUT', `/users/${child.body.id}`, acct.prodKey, { user: { name: ' ' } });
    expect(blank.status).toBe(422);
    expect(errorOf(blank)).toEqual(errorOf(await call(sys, 'PATCH', `/users/${child.body.id}`, { key: acct.prodKey, body: { user: { name: ' ' } } })));
    // The caller itself, by id, as the client does after retrieveMe().
    const self = await java('PUT', `/users/${acct.user.id}`, acct.prodKey, { user: { name: 'Renamed Parent' } });
    expect(self.status).toBe(200);
    expect(self.body.name).toBe('Renamed Parent');
  });

  it('PUT /v2/users/:id keeps PATCH\'s guards: a test key 403, another account\'s user 404', async () => {
    const other = await createAccount(sys);
    const testKey = await java('PUT', `/users/${acct.user.id}`, acct.testKey, { user: { name: 'x' } });
    expect(testKey.status).toBe(403);
    const foreign = await java('PUT', `/users/${other.user.id}`, acct.prodKey, { user: { name: 'x' } });
    expect(foreign.status).toBe(404);
  });

  it('PUT /v2/webhooks/:id rotates the secret and replaces the custom headers: 201, in the shape the client sends now and the recorded one', async () => {
    const id = await hook({ webhook_secret: 'old', custom_headers: [{ name: 'A', value: '1' }] });
    const wrapped = await java('PUT', `/webhooks/${id}`, acct.testKey, { webhook: { webhook_secret: 'sécret', custom_headers: [{ name: 'test', value: 'header' }] } });
    expect(wrapped.status).toBe(201);
    expect(wrapped.body).toMatchObject({ object: 'Webhook', id, disabled_at: null, custom_headers: [{ name: 'test', value: 'header' }] });
    expect(wrapped.body).not.toHaveProperty('webhook_secret');
    expect(await secretOf(id)).toBe('sécret');
    const topLevel = await java('PUT', `/webhooks/${id}`, acct.testKey, { webhook_secret: 'newer', custom_headers: [{ name: 'B', value: '2' }] });
    expect(topLevel.status).toBe(201);
    expect(topLevel.body.custom_headers).toEqual([{ name: 'B', value: '2' }]);
    expect(await secretOf(id)).toBe('newer');
  });

  it('PUT /v2/webhooks/:id with nothing to change re-enables a disabled webhook (update(id) sends {"webhook":{}})', async () => {
    const id = await hook({ custom_headers: [{ name: 'A', value: '1' }] });
    await sys.db.updateTable('webhooks').set({ disabled_at: new Date() }).where('id', '=', id).execute();
    const res = await java('PUT', `/webhooks/${id}`, acct.testKey, { webhook: {} });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ disabled_at: null, custom_headers: [{ name: 'A', value: '1' }] });
  });

  it('PUT /v2/webhooks/:id refuses what PATCH refuses, alike', async () => {
    const id = await hook();
    for (const body of [{ url: 'https://example.com/moved' }, { webhook: { custom_headers: [{ name: 'Host', value: 'x' }] } }, { colour: 'blue' }]) {
      const put = await java('PUT', `/webhooks/${id}`, acct.testKey, body);
      const patch = await call(sys, 'PATCH', `/webhooks/${id}`, { key: acct.testKey, body });
      expect(put.status, JSON.stringify(body)).toBe(422);
      expect(errorOf(put), JSON.stringify(body)).toEqual(errorOf(patch));
    }
    expect((await java('PUT', '/webhooks/hook_0192f3a4b5c67d8e9f0a1b2c3d4e5f60', acct.testKey, { webhook: {} })).status).toBe(404);
  });

  it('is in the OpenAPI document, and a path\'s Allow header names it', async () => {
    const doc = (await call(sys, 'GET', '/openapi.json')).body;
    for (const [path, status] of [['/v2/users/{id}', '200'], ['/v2/webhooks/{id}', '201']] as const) {
      const put = doc.paths[path].put;
      expect(put, path).toBeDefined();
      expect(Object.keys(put.responses)).toContain(status);
      expect(put.requestBody).toEqual(doc.paths[path].patch.requestBody);
      expect(put.description).toContain(`The same as \`PATCH ${path}\``);
    }
    const post = await java('POST', `/webhooks/${await hook()}`, acct.testKey, {});
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, PATCH, PUT, DELETE');
  });
});
