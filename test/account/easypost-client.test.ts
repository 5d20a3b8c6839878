import EasyPostClient from '@easypost/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, createAccount } from '../support/http';
import { startSystem, type TestSystem } from '../support/system';

// Wire compatibility: the official node client, unchanged, against shiphook.
let sys: TestSystem;
let acct: Account;
let client: any;

beforeAll(async () => {
  sys = await startSystem();
  acct = await createAccount(sys, { referral_customer: true, password: 'original password' });
  client = new EasyPostClient(acct.prodKey, { baseUrl: `${sys.baseUrl}/` });
});
afterAll(() => sys.close());

describe('@easypost/api User', () => {
  it('retrieveMe, retrieve, update', async () => {
    const me = await client.User.retrieveMe();
    expect(me.id).toBe(acct.user.id);
    expect(me.email).toBe(acct.user.email);
    const same = await client.User.retrieve(acct.user.id);
    expect(same.id).toBe(acct.user.id);
    const updated = await client.User.update(acct.user.id, { name: 'Via Client' });
    expect(updated.name).toBe('Via Client');
  });

  it('create, allChildren with paging, delete', async () => {
    const a = await client.User.create({ name: 'Client Child A' });
    const b = await client.User.create({ name: 'Client Child B' });
    expect(a.parent_id).toBe(acct.user.id);
    expect(a.api_keys).toHaveLength(2);
    const firstPage = await client.User.allChildren({ page_size: 1 });
    expect(firstPage.children.map((c: any) => c.id)).toEqual([a.id]);
    expect(firstPage.has_more).toBe(true);
    const next = await client.User.getNextPage(firstPage, 1);
    expect(next.children.map((c: any) => c.id)).toEqual([b.id]);
    await client.User.delete(a.id);
    const after = await client.User.allChildren();
    expect(after.children.map((c: any) => c.id)).toEqual([b.id]);
  });

  it('reads an error: statusCode and code', async () => {
    await expect(client.User.retrieve('user_00000000000000000000000000000000')).rejects.toMatchObject({
      statusCode: 404,
      code: 'NOT_FOUND',
    });
    const testClient = new EasyPostClient(acct.testKey, { baseUrl: `${sys.baseUrl}/` });
    await expect(testClient.User.retrieveMe()).rejects.toMatchObject({ statusCode: 403, code: 'MODE.UNAUTHORIZED' });
    const bogus = new EasyPostClient('shk_prod_bogus', { baseUrl: `${sys.baseUrl}/` });
    await expect(bogus.User.retrieveMe()).rejects.toMatchObject({ statusCode: 401, code: 'UNAUTHORIZED' });
  });
});

describe('@easypost/api ApiKey', () => {
  it('all, create, disable, enable, delete', async () => {
    const all = await client.ApiKey.all();
    expect(all.id).toBe(acct.user.id);
    expect(all.keys.map((k: any) => k.mode).sort()).toEqual(['production', 'test']);
    const created = await client.ApiKey.create('production');
    expect(created.mode).toBe('production');
    expect(created.active).toBe(true);
    const disabled = await client.ApiKey.disable(created.id);
    expect(disabled.active).toBe(false);
    const enabled = await client.ApiKey.enable(created.id);
    expect(enabled.active).toBe(true);
    await client.ApiKey.delete(created.id);
    const after = await client.ApiKey.all();
    expect(after.keys.map((k: any) => k.id)).not.toContain(created.id);
  });
});
