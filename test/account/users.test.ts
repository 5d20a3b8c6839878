import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;
let parent: Account;

const CHILD_FIELDS = ['children', 'created_at', 'default_carbon_offset', 'has_elevate_access', 'id', 'name', 'object', 'parent_id', 'phone_number', 'verified'];
const BILLING_FIELDS = ['balance', 'price_per_shipment', 'recharge_amount', 'secondary_recharge_amount', 'recharge_threshold', 'has_billing_method', 'cc_fee_rate', 'default_insurance_amount', 'insurance_fee_rate', 'insurance_fee_minimum', 'email'];

beforeAll(async () => {
  sys = await startSystem();
  parent = await createAccount(sys, { password: 'correct horse battery' });
});
afterAll(() => sys.close());

async function createChild(acct: Account, name = 'Child') {
  const res = await call(sys, 'POST', '/users', { key: acct.prodKey, body: { user: { name } } });
  expect(res.status).toBe(201);
  const keys = res.body.api_keys as { mode: string; key: string }[];
  return { id: res.body.id as string, body: res.body, prodKey: keys.find((k) => k.mode === 'production')!.key, testKey: keys.find((k) => k.mode === 'test')!.key };
}

describe('GET /users and /users/:id', () => {
  it('returns the parent with every field of the API specification, 2.6', async () => {
    const res = await call(sys, 'GET', '/users', { key: parent.prodKey });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([...CHILD_FIELDS, ...BILLING_FIELDS].sort());
    expect(res.body).toMatchObject({ object: 'User', parent_id: null, balance: '0.00000', email: parent.user.email });
    expect(res.body.id).toMatch(/^user_[0-9a-f]{32}$/);
    expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(res.body).not.toHaveProperty('password_hash');
  });

  it('shows children without billing fields and email, inside the parent too', async () => {
    const child = await createChild(parent, 'Shown Child');
    const direct = await call(sys, 'GET', `/users/${child.id}`, { key: parent.prodKey });
    expect(direct.status).toBe(200);
    expect(Object.keys(direct.body).sort()).toEqual(CHILD_FIELDS);
    expect(direct.body).toMatchObject({ parent_id: parent.user.id, children: [] });
    const me = await call(sys, 'GET', '/users', { key: parent.prodKey });
    const listed = me.body.children.find((c: any) => c.id === child.id);
    expect(Object.keys(listed).sort()).toEqual(CHILD_FIELDS);
    const self = await call(sys, 'GET', '/users', { key: child.prodKey });
    expect(Object.keys(self.body).sort()).toEqual(CHILD_FIELDS);
  });

  it('404 for another account, for a parent seen by its child, and for garbage ids', async () => {
    const other = await createAccount(sys);
    const child = await createChild(parent);
    for (const [key, id] of [
      [parent.prodKey, other.user.id],
      [other.prodKey, child.id],
      [child.prodKey, parent.user.id],
      [parent.prodKey, 'user_nope'],
    ]) {
      const res = await call(sys, 'GET', `/users/${id}`, { key });
      expect(res.status).toBe(404);
      expect(errorOf(res).code).toBe('NOT_FOUND');
    }
  });
});

describe('PATCH /users', () => {
  it('changes only the passed attributes', async () => {
    const acct = await createAccount(sys);
    const res = await call(sys, 'PATCH', '/users', { key: acct.prodKey, body: { user: { name: 'Renamed', recharge_amount: '25' } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Renamed', recharge_amount: '25.00000', email: acct.user.email });
    const again = await call(sys, 'GET', '/users', { key: acct.prodKey });
    expect(again.body.name).toBe('Renamed');
  });

  it('requires and checks current_password for email and password', async () => {
    const acct = await createAccount(sys, { password: 'first password' });
    const missing = await call(sys, 'PATCH', '/users', { key: acct.prodKey, body: { user: { email: 'new@example.com' } } });
    expect(missing.status).toBe(422);
    expect(errorOf(missing).errors).toContainEqual({ field: 'user.current_password', message: expect.stringMatching(/required/) });
    const wrong = await call(sys, 'PATCH', '/users', { key: acct.prodKey, body: { user: { password: 'second password', current_password: 'nope' } } });
    expect(wrong.status).toBe(422);
    expect(errorOf(wrong).errors).toContainEqual({ field: 'user.current_password', message: 'is incorrect' });

    const email = `changed${Date.now()}@example.com`;
    const ok = await call(sys, 'PATCH', '/users', { key: acct.prodKey, body: { user: { email, password: 'second password', current_password: 'first password' } } });
    expect(ok.status).toBe(200);
    expect(ok.body.email).toBe(email);
    // the new password is the one checked now
    const stale = await call(sys, 'PATCH', '/users', { key: acct.prodKey, body: { user: { password: 'third password', current_password: 'first password' } } });
    expect(stale.status).toBe(422);
    const row = await sys.db.selectFrom('users').select('password_hash').where('id', '=', acct.user.id).executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^scrypt\$/);
    expect(row.password_hash).not.toContain('second password');
  });

  it('refuses invalid values with field errors and changes nothing', async () => {
    const acct = await createAccount(sys);
    const res = await call(sys, 'PATCH', '/users', { key: acct.prodKey, body: { user: { name: '', recharge_amount: 'lots', email: 'nope' } } });
    expect(res.status).toBe(422);
    expect(errorOf(res).code).toBe('USER.INVALID');
    expect(errorOf(res).errors.map((e: any) => e.field).sort()).toEqual(['user.email', 'user.name', 'user.recharge_amount']);
    const me = await call(sys, 'GET', '/users', { key: acct.prodKey });
    expect(me.body.name).toBe('Test User');
  });

  it('lets a child change only its name, ignoring other fields', async () => {
    const child = await createChild(parent, 'Before');
    const res = await call(sys, 'PATCH', '/users', { key: child.prodKey, body: { user: { name: 'After', phone_number: '5551234567', email: 'x@example.com', recharge_amount: '9' } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: child.id, name: 'After', phone_number: null });
    expect(res.body).not.toHaveProperty('email');
  });

  it('PATCH /users/:id updates self or an own child, 404 otherwise', async () => {
    const child = await createChild(parent, 'Kid');
    const res = await call(sys, 'PATCH', `/users/${child.id}`, { key: parent.prodKey, body: { user: { name: 'Kid Renamed' } } });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Kid Renamed');
    const self = await call(sys, 'PATCH', `/users/${parent.user.id}`, { key: parent.prodKey, body: { user: { phone_number: '5550001111' } } });
    expect(self.body.phone_number).toBe('5550001111');
    const other = await createAccount(sys);
    const refused = await call(sys, 'PATCH', `/users/${child.id}`, { key: other.prodKey, body: { user: { name: 'Hijack' } } });
    expect(refused.status).toBe(404);
  });

  it('refuses a test key with MODE.UNAUTHORIZED', async () => {
    const res = await call(sys, 'PATCH', '/users', { key: parent.testKey, body: { user: { name: 'x' } } });
    expect(res.status).toBe(403);
    expect(errorOf(res).code).toBe('MODE.UNAUTHORIZED');
  });
});

describe('children', () => {
  it('POST /users creates a child with a test and a production key that work', async () => {
    const child = await createChild(parent, 'Keyed');
    expect(child.body.api_keys.map((k: any) => k.mode).sort()).toEqual(['production', 'test']);
    expect(child.body).toMatchObject({ object: 'User', parent_id: parent.user.id, name: 'Keyed' });
    const me = await call(sys, 'GET', '/users', { key: child.prodKey });
    expect(me.body.id).toBe(child.id);
  });

  it('a child cannot create a child: USER.PARENT.INVALID', async () => {
    const child = await createChild(parent);
    const res = await call(sys, 'POST', '/users', { key: child.prodKey, body: { user: { name: 'Grandchild' } } });
    expect(res.status).toBe(422);
    expect(errorOf(res).code).toBe('USER.PARENT.INVALID');
  });

  it('a child needs a name', async () => {
    const res = await call(sys, 'POST', '/users', { key: parent.prodKey, body: { user: {} } });
    expect(res.status).toBe(422);
    expect(errorOf(res).errors).toEqual([{ field: 'user.name', message: 'cannot be blank' }]);
  });

  it('DELETE /users/:id removes a child and its keys stop working', async () => {
    const child = await createChild(parent, 'Doomed');
    const res = await call(sys, 'DELETE', `/users/${child.id}`, { key: parent.prodKey });
    expect(res.status).toBe(204);
    expect((await call(sys, 'GET', '/users', { key: child.prodKey })).status).toBe(401);
    expect((await call(sys, 'GET', `/users/${child.id}`, { key: parent.prodKey })).status).toBe(404);
    expect((await call(sys, 'DELETE', `/users/${child.id}`, { key: parent.prodKey })).status).toBe(404);
  });

  it('DELETE refuses the caller itself and other accounts', async () => {
    const self = await call(sys, 'DELETE', `/users/${parent.user.id}`, { key: parent.prodKey });
    expect(self.status).toBe(403);
    expect(errorOf(self).code).toBe('USER.UNAUTHORIZED');
    const other = await createAccount(sys);
    const child = await createChild(parent);
    expect((await call(sys, 'DELETE', `/users/${child.id}`, { key: other.prodKey })).status).toBe(404);
  });
});

describe('shiphook admin create-user', () => {
  it('prints {user, api_keys} and the keys work', async () => {
    const email = `cli${Date.now()}@example.com`;
    // Not execFileSync: this process serves the api meanwhile.
    const { stdout: out } = await promisify(execFile)(process.execPath, [path.resolve('bin/shiphook.mjs'), 'admin', 'create-user', '--name', 'From Shell', '--email', email, '--referral-customer'], {
      env: { ...process.env, DATABASE_URL: inject('databaseUrl'), LOG_LEVEL: 'warn' },
      encoding: 'utf8',
    });
    const created = JSON.parse(out);
    expect(created.user).toMatchObject({ name: 'From Shell', email });
    expect(created.api_keys.map((k: any) => k.mode)).toEqual(['test', 'production']);
    const me = await call(sys, 'GET', '/users', { key: created.api_keys[1].key });
    expect(me.body.id).toBe(created.user.id);
  });
});
