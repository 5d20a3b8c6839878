import EasyPostClient from '@easypost/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;
let acct: Account;

beforeAll(async () => {
  sys = await startSystem();
  acct = await createAccount(sys);
});
afterAll(() => sys.close());

const create = (key: string, webhook: unknown) => call(sys, 'POST', '/webhooks', { key, body: { webhook } });

describe('POST /webhooks', () => {
  it('creates a webhook in the key’s mode, adds https:// and never returns the secret', async () => {
    const res = await create(acct.testKey, { url: 'example.com/hooks', webhook_secret: 's3cret' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^hook_[0-9a-f]{32}$/),
      object: 'Webhook',
      mode: 'test',
      url: 'https://example.com/hooks',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      disabled_at: null,
      custom_headers: [],
      event_types: null,
      rate_limit: null,
      ordering: 'none',
    });
    expect(JSON.stringify(res.body)).not.toContain('s3cret');
    const prod = await create(acct.prodKey, { url: 'https://example.com/prod' });
    expect(prod.body.mode).toBe('production');
  });

  it('masks credentials embedded in the URL', async () => {
    const res = await create(acct.testKey, { url: 'https://user:hunter2@example.com/basic' });
    expect(res.body.url).toBe('https://***@example.com/basic');
    const got = await call(sys, 'GET', `/webhooks/${res.body.id}`, { key: acct.testKey });
    expect(JSON.stringify(got.body)).not.toContain('hunter2');
  });

  it('stores custom headers', async () => {
    const headers = [{ name: 'X-Api-Token', value: 'abc' }, { name: 'Tenant', value: 'blue' }];
    const res = await create(acct.testKey, { url: 'https://example.com/h', custom_headers: headers });
    expect(res.body.custom_headers).toEqual(headers);
  });

  it('missing webhook object → 422 PARAMETER.REQUIRED; missing url → WEBHOOK.INVALID', async () => {
    const none = await call(sys, 'POST', '/webhooks', { key: acct.testKey, body: {} });
    expect(none.status).toBe(422);
    expect(errorOf(none).code).toBe('PARAMETER.REQUIRED');
    const noUrl = await create(acct.testKey, {});
    expect(noUrl.status).toBe(422);
    expect(errorOf(noUrl)).toMatchObject({ code: 'WEBHOOK.INVALID', errors: [{ field: 'webhook.url', message: 'cannot be blank' }] });
    const ftp = await create(acct.testKey, { url: 'ftp://example.com/x' });
    expect(errorOf(ftp).errors[0]).toEqual({ field: 'webhook.url', message: 'must use https' });
  });

  const cases: [string, unknown, string, RegExp][] = [
    ['more than 3', [1, 2, 3, 4].map((i) => ({ name: `H${i}`, value: 'v' })), 'custom_headers', /at most 3/],
    ['missing name', [{ value: 'v' }], 'custom_headers[0].name', /required/],
    ['missing value', [{ name: 'H' }], 'custom_headers[0].value', /required/],
    ['non-ASCII value', [{ name: 'H', value: 'café' }], 'custom_headers[0].value', /ASCII/],
    ['CR/LF in value', [{ name: 'H', value: 'a\r\nInjected: 1' }], 'custom_headers[0].value', /ASCII/],
    ['1000-character name', [{ name: 'H'.repeat(1000), value: 'v' }], 'custom_headers[0].name', /fewer than 1000/],
    ['1000-character value', [{ name: 'H', value: 'v'.repeat(1000) }], 'custom_headers[0].value', /fewer than 1000/],
    ['duplicate names (case-insensitive)', [{ name: 'X-A', value: '1' }, { name: 'x-a', value: '2' }], 'custom_headers[1].name', /unique/],
    ['name not an RFC 9110 token', [{ name: 'Bad Header:', value: 'v' }], 'custom_headers[0].name', /header name/],
    ['brand prefix', [{ name: 'X-Shiphook-Signature', value: 'v' }], 'custom_headers[0].name', /X-Shiphook-/],
    ['not an array', { name: 'H', value: 'v' }, 'custom_headers', /array/],
  ];
  it.each(cases)('custom headers: %s → WEBHOOK.INVALID', async (_name, custom_headers, field, message) => {
    const before = await call(sys, 'GET', '/webhooks', { key: acct.testKey });
    const res = await create(acct.testKey, { url: 'https://example.com/h', custom_headers });
    expect(res.status).toBe(422);
    const err = errorOf(res);
    expect(err.code).toBe('WEBHOOK.INVALID');
    expect(err.errors).toContainEqual({ field: `webhook.${field}`, message: expect.stringMatching(message) });
    const after = await call(sys, 'GET', '/webhooks', { key: acct.testKey });
    expect(after.body.webhooks).toHaveLength(before.body.webhooks.length);
  });

  it('accepts 999-character names and values and headers the service also sets', async () => {
    const res = await create(acct.testKey, {
      url: 'https://example.com/h',
      custom_headers: [{ name: 'H'.repeat(999), value: 'v'.repeat(999) }, { name: 'X-Hmac-Signature', value: 'overridden at delivery' }],
    });
    expect(res.status).toBe(201);
  });
});

describe('GET, PATCH, DELETE', () => {
  it('lists newest first, only the key’s user and mode, without has_more', async () => {
    const a = await createAccount(sys);
    const first = await create(a.testKey, { url: 'https://example.com/1' });
    const second = await create(a.testKey, { url: 'https://example.com/2' });
    await create(a.prodKey, { url: 'https://example.com/prod' });
    const res = await call(sys, 'GET', '/webhooks', { key: a.testKey });
    expect(Object.keys(res.body)).toEqual(['webhooks']);
    expect(res.body.webhooks.map((w: any) => w.id)).toEqual([second.body.id, first.body.id]);
  });

  it('a test key never sees production webhooks, nor another account’s', async () => {
    const prod = await create(acct.prodKey, { url: 'https://example.com/p' });
    for (const key of [acct.testKey, (await createAccount(sys)).prodKey]) {
      expect((await call(sys, 'GET', `/webhooks/${prod.body.id}`, { key })).status).toBe(404);
      expect((await call(sys, 'PATCH', `/webhooks/${prod.body.id}`, { key, body: { webhook_secret: 'x' } })).status).toBe(404);
      expect((await call(sys, 'DELETE', `/webhooks/${prod.body.id}`, { key })).status).toBe(404);
    }
  });

  it('PATCH answers 201, replaces the header list, updates the secret and re-enables', async () => {
    const hook = await create(acct.testKey, { url: 'https://example.com/p', webhook_secret: 'old', custom_headers: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] });
    await sys.db.updateTable('webhooks').set({ disabled_at: new Date() }).where('id', '=', hook.body.id).execute();
    const disabled = await call(sys, 'GET', `/webhooks/${hook.body.id}`, { key: acct.testKey });
    expect(disabled.body.disabled_at).not.toBeNull();
    const res = await call(sys, 'PATCH', `/webhooks/${hook.body.id}`, { key: acct.testKey, body: { webhook_secret: 'new', custom_headers: [{ name: 'C', value: '3' }] } });
    expect(res.status).toBe(201);
    expect(res.body.custom_headers).toEqual([{ name: 'C', value: '3' }]);
    expect(res.body.disabled_at).toBeNull();
    const row = await sys.db.selectFrom('webhooks').select('webhook_secret').where('id', '=', hook.body.id).executeTakeFirstOrThrow();
    expect(row.webhook_secret).toBe('new');
  });

  it('an empty PATCH re-enables and keeps secret and headers; invalid headers change nothing', async () => {
    const hook = await create(acct.testKey, { url: 'https://example.com/p', webhook_secret: 'keep', custom_headers: [{ name: 'A', value: '1' }] });
    await sys.db.updateTable('webhooks').set({ disabled_at: new Date() }).where('id', '=', hook.body.id).execute();
    const bad = await call(sys, 'PATCH', `/webhooks/${hook.body.id}`, { key: acct.testKey, body: { custom_headers: [{ name: 'X-Shiphook-Nope', value: '1' }] } });
    expect(bad.status).toBe(422);
    const still = await call(sys, 'GET', `/webhooks/${hook.body.id}`, { key: acct.testKey });
    expect(still.body.disabled_at).not.toBeNull();
    const res = await call(sys, 'PATCH', `/webhooks/${hook.body.id}`, { key: acct.testKey, body: {} });
    expect(res.body).toMatchObject({ disabled_at: null, custom_headers: [{ name: 'A', value: '1' }] });
    const row = await sys.db.selectFrom('webhooks').select('webhook_secret').where('id', '=', hook.body.id).executeTakeFirstOrThrow();
    expect(row.webhook_secret).toBe('keep');
  });

  it('PATCH without any body re-enables too, as the document says (a fuzzer finding)', async () => {
    const hook = await create(acct.testKey, { url: 'https://example.com/nobody', custom_headers: [{ name: 'A', value: '1' }] });
    await sys.db.updateTable('webhooks').set({ disabled_at: new Date() }).where('id', '=', hook.body.id).execute();
    const res = await call(sys, 'PATCH', `/webhooks/${hook.body.id}`, { key: acct.testKey });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ disabled_at: null, custom_headers: [{ name: 'A', value: '1' }] });
    expect((await call(sys, 'GET', `/webhooks/${hook.body.id}`, { key: acct.testKey })).body.disabled_at).toBeNull();
  });

  it('DELETE answers 200 {} and the webhook is gone', async () => {
    const hook = await create(acct.testKey, { url: 'https://example.com/gone' });
    const res = await call(sys, 'DELETE', `/webhooks/${hook.body.id}`, { key: acct.testKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect((await call(sys, 'GET', `/webhooks/${hook.body.id}`, { key: acct.testKey })).status).toBe(404);
    const list = await call(sys, 'GET', '/webhooks', { key: acct.testKey });
    expect(list.body.webhooks.map((w: any) => w.id)).not.toContain(hook.body.id);
  });
});

describe('@easypost/api Webhook', () => {
  it('create, all, retrieve, update, delete', async () => {
    const a = await createAccount(sys);
    const client: any = new EasyPostClient(a.testKey, { baseUrl: `${sys.baseUrl}/` });
    const hook = await client.Webhook.create({ url: 'example.com/client', webhook_secret: 'sec' });
    expect(hook.url).toBe('https://example.com/client');
    expect((await client.Webhook.all()).webhooks.map((w: any) => w.id)).toEqual([hook.id]);
    expect((await client.Webhook.retrieve(hook.id)).id).toBe(hook.id);
    const updated = await client.Webhook.update(hook.id, { custom_headers: [{ name: 'X-Team', value: 'ops' }] });
    expect(updated.custom_headers.map((h: any) => ({ name: h.name, value: h.value }))).toEqual([{ name: 'X-Team', value: 'ops' }]);
    await client.Webhook.delete(hook.id);
    await expect(client.Webhook.retrieve(hook.id)).rejects.toMatchObject({ statusCode: 404 });
  });
});
