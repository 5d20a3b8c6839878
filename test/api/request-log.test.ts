import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, createAccount, type Account } from '../support/http';
import { logFile } from '../support/log-capture';
import { eventually } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';
import { TEST_ENV } from '../support/test-config';

/** This test process's log lines (test/support/system.ts sends them to the suite's log folder). */
const logLines = () =>
  readFileSync(logFile(inject('logDir'), `tests-${process.pid}`), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);
const linesOf = (requestId: string) => logLines().filter((l) => l.request_id === requestId && l.msg === 'request');
/** A request's line is written once its answer is done, which may be just after the client has read it. */
const lineOf = (requestId: string) => eventually(async () => linesOf(requestId)[0], 10_000, `the request line of ${requestId}`);

let sys: TestSystem;
let acct: Account;
const run = `rl-${process.pid}-${Date.now()}`;

beforeAll(async () => {
  sys = await startSystem();
  acct = await createAccount(sys);
});
afterAll(async () => {
  await sys.close();
});

describe('one info line per API request', () => {
  it('says method, route template, status, duration, request id and caller, and nothing of the path, query, headers or body', async () => {
    const secret = 'rl-webhook-secret-5d1e';
    const created = await call(sys, 'POST', '/webhooks', {
      key: acct.testKey,
      headers: { 'x-request-id': `${run}-create` },
      body: { webhook: { url: 'https://rl-user:rl-url-password@example.com/hook', webhook_secret: secret } },
    });
    expect(created.status).toBe(201);
    const hookId: string = created.body.id;
    const read = await call(sys, 'GET', `/webhooks/${hookId}?page_size=3`, { key: acct.testKey, headers: { 'x-request-id': `${run}-read` } });
    expect(read.status).toBe(200);

    const createLine = await lineOf(`${run}-create`);
    expect(createLine).toMatchObject({ level: 'info', method: 'POST', route: '/v2/webhooks', status: 201, user_id: acct.user.id, mode: 'test' });
    expect(createLine!.duration_ms).toEqual(expect.any(Number));
    expect(linesOf(`${run}-create`)).toHaveLength(1);
    const readLine = await lineOf(`${run}-read`);
    expect(readLine).toMatchObject({ level: 'info', method: 'GET', route: '/v2/webhooks/:id', status: 200 });
    expect(readLine).not.toHaveProperty('path');

    const text = JSON.stringify([createLine, readLine]);
    for (const leak of [hookId, 'page_size', secret, 'rl-url-password', acct.testKey, 'authorization', 'example.com']) expect(text).not.toContain(leak);
  });

  it('is written for refusals, operator, portal and docs routes, with the template of the real path', async () => {
    const cases: [string, () => Promise<Response | { status: number }>, Record<string, unknown>][] = [
      ['unknown-key', () => call(sys, 'GET', '/webhooks', { key: 'shk_test_' + '0'.repeat(48), headers: { 'x-request-id': `${run}-unknown-key` } }), { route: 'unmatched', status: 401 }],
      ['missing', () => call(sys, 'GET', '/webhooks/hook_nope', { key: acct.testKey, headers: { 'x-request-id': `${run}-missing` } }), { route: '/v2/webhooks/:id', status: 404, user_id: acct.user.id }],
      ['method', () => call(sys, 'POST', '/webhooks/hook_nope', { key: acct.testKey, headers: { 'x-request-id': `${run}-method` } }), { route: '/v2/webhooks/:id', status: 405 }],
      ['operator', () => call(sys, 'GET', '/admin/v1/replays/replay_nope', { headers: { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}`, 'x-request-id': `${run}-operator` } }), { route: '/admin/v1/replays/:id', status: 404 }],
      ['openapi', () => fetch(`${sys.origin}/v2/openapi.json`, { headers: { 'x-request-id': `${run}-openapi` } }), { route: '/v2/openapi.json', status: 200 }],
      ['docs', () => fetch(`${sys.origin}/docs/index.html`, { headers: { 'x-request-id': `${run}-docs` } }), { route: '/docs/*', status: 200 }],
      ['portal', () => fetch(`${sys.origin}/portal/login/not-a-real-token-${run}`, { headers: { 'x-request-id': `${run}-portal` } }), { route: '/portal/login/:token', status: 403 }],
    ];
    for (const [name, send, expected] of cases) {
      await send();
      await lineOf(`${run}-${name}`);
      const lines = linesOf(`${run}-${name}`);
      expect(lines, name).toEqual([expect.objectContaining({ level: 'info', ...expected })]);
      expect(JSON.stringify(lines), name).not.toMatch(/hook_nope|replay_nope|not-a-real-token|shk_test_0/);
    }
  });

  it('leaves health probes and metrics scrapes out', async () => {
    for (const probe of ['/healthz', '/readyz', '/metrics']) await fetch(`${sys.origin}${probe}`, { headers: { 'x-request-id': `${run}-probe`, authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` } });
    // A later request's line is written, so the probes' would be too by now.
    await call(sys, 'GET', '/webhooks', { key: acct.testKey, headers: { 'x-request-id': `${run}-after-probe` } });
    await lineOf(`${run}-after-probe`);
    expect(linesOf(`${run}-probe`)).toEqual([]);
  });
});
