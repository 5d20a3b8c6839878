import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { randomBytes, scrypt } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { verifyPassword } from '../../src/account/secrets';
import { call, createAccount } from '../support/http';
import { startSystem, type TestSystem } from '../support/system';
import { TEST_ENV } from '../support/test-config';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startSystem();
});
afterAll(async () => {
  await sys.close();
});

const CLI = path.resolve('bin/shiphook.mjs');
const cliEnv = () => ({ ...process.env, DATABASE_URL: inject('databaseUrl'), LOG_LEVEL: 'warn' });
const hashOf = async (email: string) =>
  (await sys.db.selectFrom('users').select('password_hash').where('email', '=', email).executeTakeFirst())?.password_hash;

describe('passwords', () => {
  it('are hashed with scrypt at N = 2^17, r = 8, p = 1', async () => {
    const acct = await createAccount(sys, { password: 'correct horse battery' });
    const stored = (await hashOf(acct.user.email))!;
    expect(stored).toMatch(/^scrypt\$131072\$/);
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('wrong horse battery', stored)).toBe(false);
  });

  it('an older, weaker hash is upgraded on the next successful check', async () => {
    const acct = await createAccount(sys, { password: 'placeholder pw' });
    const salt = randomBytes(16);
    const weak = (await promisify(scrypt)('old password', salt, 32)) as Buffer; // N = 16384, the old default
    const old = `scrypt$16384$${salt.toString('base64')}$${weak.toString('base64')}`;
    await sys.db.updateTable('users').set({ password_hash: old }).where('id', '=', acct.user.id).execute();

    const wrong = await call(sys, 'PATCH', '/users', { key: acct.prodKey, body: { user: { email: acct.user.email, current_password: 'not it' } } });
    expect(wrong.status).toBe(422);
    expect(await hashOf(acct.user.email)).toBe(old);

    const ok = await call(sys, 'PATCH', '/users', { key: acct.prodKey, body: { user: { email: acct.user.email, current_password: 'old password' } } });
    expect(ok.status).toBe(200);
    const upgraded = (await hashOf(acct.user.email))!;
    expect(upgraded).toMatch(/^scrypt\$131072\$/);
    expect(await verifyPassword('old password', upgraded)).toBe(true);
  });

  it('admin create-user never takes a password from argv; stdin and the environment work', async () => {
    const refusedEmail = `argv${Date.now()}@example.com`;
    const refused = spawnSync(process.execPath, [CLI, 'admin', 'create-user', '--name', 'N', '--email', refusedEmail, '--password', 'visible in ps'], { env: cliEnv(), encoding: 'utf8' });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/--password-stdin/);
    expect(await hashOf(refusedEmail)).toBeUndefined();

    const stdinEmail = `stdin${Date.now()}@example.com`;
    execFileSync(process.execPath, [CLI, 'admin', 'create-user', '--name', 'N', '--email', stdinEmail, '--password-stdin'], { env: cliEnv(), input: 'from standard input\n', encoding: 'utf8' });
    expect(await verifyPassword('from standard input', (await hashOf(stdinEmail))!)).toBe(true);

    const envEmail = `env${Date.now()}@example.com`;
    execFileSync(process.execPath, [CLI, 'admin', 'create-user', '--name', 'N', '--email', envEmail], { env: { ...cliEnv(), SHIPHOOK_NEW_USER_PASSWORD: 'from the environment' }, encoding: 'utf8' });
    expect(await verifyPassword('from the environment', (await hashOf(envEmail))!)).toBe(true);
  });
});

describe('admin token', () => {
  it('refuses every token but the configured one, whatever its length', async () => {
    const token = TEST_ENV.SHIPHOOK_ADMIN_TOKEN;
    for (const given of ['', 'x', token.slice(0, -1), token + 'x', token.toUpperCase(), 'y'.repeat(token.length)]) {
      const res = await call(sys, 'POST', '/admin/v1/users', { headers: { authorization: `Bearer ${given}` }, body: {} });
      expect(res.status, JSON.stringify(given)).toBe(401);
    }
    const ok = await call(sys, 'POST', '/admin/v1/users', { headers: { authorization: `Bearer ${token}` }, body: { name: 'A', email: `tok${Date.now()}@example.com` } });
    expect(ok.status).toBe(201);
  });

  it('a configured token shorter than 32 characters stops the process at start', () => {
    const run = spawnSync(process.execPath, [CLI, 'migrate'], { env: { ...cliEnv(), SHIPHOOK_ADMIN_TOKEN: 'short-token' }, encoding: 'utf8' });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/at least 32 characters/);
  });
});
