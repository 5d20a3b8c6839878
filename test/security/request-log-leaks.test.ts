import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, createAccount } from '../support/http';
import { findLeaks, logFile } from '../support/log-capture';
import { eventually } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;
const scratch = mkdtempSync(path.join(tmpdir(), 'shiphook-request-leaks-'));

beforeAll(async () => {
  sys = await startSystem();
});
afterAll(async () => {
  await sys.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe("the suite's leak check covers the request lines", () => {
  it('a portal link, a key in the query and credentials in a body leave no trace in the request lines', async () => {
    const acct = await createAccount(sys);
    const link: string = (await call(sys, 'POST', '/portal_sessions', { key: acct.testKey })).body.url;
    const token = link.split('/').pop()!;
    const id = `leak-${process.pid}-${Date.now()}`;
    // A browser following the link (the cookie exchange), a client that puts its key in the query, a secret in a body.
    await fetch(link, { redirect: 'manual', headers: { 'x-request-id': `${id}-portal` } });
    await fetch(`${sys.baseUrl}/webhooks?api_key=${acct.testKey}`, { headers: { 'x-request-id': `${id}-query` } });
    await call(sys, 'POST', '/webhooks', { key: acct.testKey, headers: { 'x-request-id': `${id}-body` }, body: { webhook: { url: 'https://leak-user:leak-pass-7731@example.com/h', webhook_secret: 'leak-secret-5521' } } });

    const file = logFile(inject('logDir'), `tests-${process.pid}`);
    const read = () => readFileSync(file, 'utf8').split('\n').filter((l) => l.includes(id));
    // A request's line is written once its answer is done, which may be just after the client has read it.
    const lines = await eventually(async () => (read().filter((l) => l.includes('"msg":"request"')).length === 3 ? read() : undefined), 10_000, 'three request lines');
    for (const secret of [token, acct.testKey, 'leak-pass-7731', 'leak-secret-5521']) expect(lines.filter((l) => l.includes(secret))).toEqual([]);
    // The suite-wide check over this process's whole log, with the secrets this test used.
    expect(findLeaks(path.dirname(file), [acct.testKey, 'leak-pass-7731', 'leak-secret-5521']).filter((l) => l.file === path.basename(file))).toEqual([]);
  });

  it('flags a portal link token wherever a line holds one (only its digest is stored, so its shape is the needle)', () => {
    const token = 'A'.repeat(20) + '_-' + 'b'.repeat(21);
    writeFileSync(logFile(scratch, 'raw'), [
      JSON.stringify({ level: 'info', msg: 'request', route: '/portal/login/:token' }),
      JSON.stringify({ level: 'info', msg: 'request', path: `/portal/login/${token}` }),
      JSON.stringify({ level: 'error', msg: 'portal error', path: `/login/${token}` }),
    ].join('\n'));
    expect(findLeaks(scratch, []).map((l) => [l.line, l.what])).toEqual([[2, 'a portal link token'], [3, 'a portal link token']]);
  });
});
