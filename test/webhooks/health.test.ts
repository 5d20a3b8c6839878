import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { healthWorkflowId } from '../../src/engine/contract';
import { eventStatus, publish, webhook } from '../support/events';
import { call, createAccount, errorOf } from '../support/http';
import { isolatedSystem } from '../support/isolated';
import { logFile } from '../support/log-capture';
import { eventually, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startSystem();
});
afterAll(async () => {
  await sys.close();
});

const healthOf = async (s: TestSystem, key: string, id: string) => (await call(s, 'GET', `/webhooks/${id}/health`, { key })).body;
const healthWhen = (s: TestSystem, key: string, id: string, ok: (h: any) => boolean, what: string, timeoutMs = 20_000) =>
  eventually(async () => {
    const h = await healthOf(s, key, id);
    return ok(h) ? h : undefined;
  }, timeoutMs, what);
/** The info lines about one webhook among JSON log lines. */
const infoLines = (lines: string[], webhookId: string) =>
  lines
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, any>];
      } catch {
        return []; // not one of ours (a child's stderr)
      }
    })
    .filter((l) => l.level === 'info' && l.webhook_id === webhookId);
const described = async (id: string, runId?: string) => (await sys.temporal()).workflow.getHandle(healthWorkflowId(id), runId).describe();
const workflowWhen = (id: string, ok: (d: Awaited<ReturnType<typeof described>>) => boolean, what: string) =>
  eventually(async () => {
    const d = await described(id).catch(() => undefined);
    return d && ok(d) ? d : undefined;
  }, 20_000, what);

describe('why a webhook is disabled', () => {
  it('after a 410 the view says the endpoint is gone, with the 410 as the last failure', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver(status(410));
    const hook = await webhook(sys, acct.testKey, receiver.url);
    await publish(sys, acct.user.id, 'test');
    const health = await healthWhen(sys, acct.testKey, hook.id, (h) => h.status === 'disabled', 'the webhook to be disabled');
    expect(health).toMatchObject({ disabled_reason: 'endpoint_gone', disabled_policy: null, last_failure_response_code: 410, disabled_at: expect.any(String) });
    // The suite's worker logged it, once, with its reason.
    const lines = await eventually(async () => {
      const found = infoLines(readFileSync(logFile(inject('logDir'), 'worker'), 'utf8').split('\n'), hook.id);
      return found.length ? found : undefined;
    }, 10_000, 'the worker’s line');
    expect(lines.map((l) => [l.msg, l.reason])).toEqual([['webhook disabled', 'endpoint_gone']]);
    await receiver.close();
  });

  it('after sustained failures it names the policy that applied; a re-enable shows it waiting, the streak reset, and restarts the health workflow', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver(status(500));
    const hook = await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test');
    const disabled = await healthWhen(sys, acct.testKey, hook.id, (h) => h.status === 'disabled', 'the webhook to be disabled');
    // The suite's policy (test/support/test-config.ts): 4 failures over 1 s.
    expect(disabled).toMatchObject({ disabled_reason: 'sustained_failures', disabled_policy: { failures: 4, after: '1s' }, reenabled_at: null });
    expect(disabled.consecutive_failures).toBeGreaterThanOrEqual(4);
    await eventStatus(sys, acct.testKey, event.id, 'failed');
    const before = await workflowWhen(hook.id, (d) => d.status.name === 'RUNNING', 'the health workflow to run');

    expect((await call(sys, 'PATCH', `/webhooks/${hook.id}`, { key: acct.testKey, body: {} })).status).toBe(201);
    const waiting = await healthOf(sys, acct.testKey, hook.id);
    expect(waiting).toMatchObject({ status: 'waiting', consecutive_failures: 0, failing_since: null, disabled_at: null, disabled_reason: null, disabled_policy: null, reenabled_at: expect.any(String) });
    // The old failures are still there to read, but no longer make it "failing".
    expect(waiting.last_failure_at).not.toBeNull();
    // A fresh run of the workflow (continued as new), with nothing of the old run of failures.
    const after = await workflowWhen(hook.id, (d) => d.runId !== before.runId, 'a fresh health workflow run');
    expect(after.status.name).toBe('RUNNING');
    expect((await described(hook.id, before.runId)).status.name).toBe('CONTINUED_AS_NEW');

    receiver.answer(status(200));
    const next = await publish(sys, acct.user.id, 'test');
    await eventStatus(sys, acct.testKey, next.id, 'completed');
    expect((await healthOf(sys, acct.testKey, hook.id)).status).toBe('healthy');
    await receiver.close();
  });
});

describe('the last error', () => {
  it('says what happened when there is no body to quote: the status and "empty body", or no response and why', async () => {
    const acct = await createAccount(sys);
    const empty = await startReceiver((_d, _i, res) => void res.writeHead(500).end());
    const closed = await startReceiver();
    await closed.close(); // nothing listens there any more: the connection is refused
    const [quiet, gone] = [await webhook(sys, acct.testKey, empty.url), await webhook(sys, acct.testKey, closed.url)];
    await publish(sys, acct.user.id, 'test');
    const failed = (id: string) => healthWhen(sys, acct.testKey, id, (h) => h.last_error !== null, 'a failed attempt');
    expect(await failed(quiet.id)).toMatchObject({ last_failure_response_code: 500, last_error: 'HTTP 500, empty body' });
    expect(await failed(gone.id)).toMatchObject({ last_failure_response_code: 0, last_error: expect.stringMatching(/^no response: \S/) });
    await empty.close();
  });
});

describe('the health workflow of a deleted webhook', () => {
  it('ends when its webhook is deleted, and a retry to the deleted webhook does not start it again', async () => {
    const acct = await createAccount(sys);
    // Attempt 1 fails and starts the workflow; the retry waits 12 s (Retry-After) and finds the webhook deleted.
    const receiver = await startReceiver(status(503, { 'retry-after': '12' }));
    const hook = await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test');
    const running = await workflowWhen(hook.id, (d) => d.status.name === 'RUNNING', 'the health workflow to run');
    expect((await call(sys, 'DELETE', `/webhooks/${hook.id}`, { key: acct.testKey })).status).toBe(200);
    const closed = await workflowWhen(hook.id, (d) => d.status.name !== 'RUNNING', 'the health workflow to end');
    expect(closed.status.name).toBe('COMPLETED');
    expect(closed.runId).toBe(running.runId);
    await eventStatus(sys, acct.testKey, event.id, 'failed', 30_000);
    expect(receiver.deliveries).toHaveLength(1);
    const still = await described(hook.id);
    expect([still.runId, still.status.name]).toEqual([running.runId, 'COMPLETED']);
    await receiver.close();
  });
});

describe('a changed disable policy', () => {
  it('applies to a webhook already failing once the workers restart with it, and each state change is one info line', async () => {
    const iso = await isolatedSystem();
    const receiver = await startReceiver(status(500));
    try {
      const acct = await createAccount(iso.api);
      const hook = await webhook(iso.api, acct.testKey, receiver.url.replace('http://', 'http://ops:hunter2pw@'));
      // A lenient policy: one event's four failures are far from it.
      const lenient = await iso.workerProcess({ env: { SHIPHOOK_DISABLE_AFTER_FAILURES: '1000', SHIPHOOK_DISABLE_AFTER: '1h' } });
      const first = await publish(iso.api, acct.user.id, 'test');
      await eventStatus(iso.api, acct.testKey, first.id, 'failed');
      const failing = await healthOf(iso.api, acct.testKey, hook.id);
      expect(failing).toMatchObject({ status: 'failing', consecutive_failures: 4, disabled_at: null });
      await lenient.stop();

      // Restarted with a strict policy: the next failures reach its threshold (3, then 6), and the workflow decides under it.
      const strict = await iso.workerProcess({ env: { SHIPHOOK_DISABLE_AFTER_FAILURES: '3', SHIPHOOK_DISABLE_AFTER: '2s' } });
      await publish(iso.api, acct.user.id, 'test');
      const disabled = await healthWhen(iso.api, acct.testKey, hook.id, (h) => h.status === 'disabled', 'the webhook to be disabled under the new policy', 30_000);
      expect(disabled).toMatchObject({ disabled_reason: 'sustained_failures', disabled_policy: { failures: 3, after: '2s' } });

      // Re-enabled, one failure, then a success; then deleted.
      receiver.answer((_d, i, res) => void res.writeHead(i % 2 === 0 ? 500 : 200).end());
      expect((await call(iso.api, 'PATCH', `/webhooks/${hook.id}`, { key: acct.testKey, body: {} })).status).toBe(201);
      receiver.deliveries.length = 0;
      const third = await publish(iso.api, acct.user.id, 'test');
      await eventStatus(iso.api, acct.testKey, third.id, 'completed');
      expect((await healthOf(iso.api, acct.testKey, hook.id)).status).toBe('healthy');
      expect((await call(iso.api, 'DELETE', `/webhooks/${hook.id}`, { key: acct.testKey })).status).toBe(200);

      const info = (lines: string[]) => infoLines(lines, hook.id);
      const apiLines = () => info(readFileSync(logFile(inject('logDir'), `tests-${process.pid}`), 'utf8').split('\n'));
      expect(info(lenient.logs).map((l) => l.msg)).toEqual(['webhook failing']);
      const strictLines = await eventually(async () => {
        const lines = info(strict.logs);
        return lines.some((l) => l.msg === 'webhook recovered') ? lines : undefined;
      }, 10_000, 'the recovery line');
      expect(strictLines.map((l) => l.msg)).toEqual(['webhook disabled', 'webhook failing', 'webhook recovered']);
      expect(strictLines[0]).toMatchObject({ reason: 'sustained_failures', policy: { failures: 3, after: '2s' } });
      expect(strictLines[1]).toMatchObject({ response_code: 500 });
      const api = await eventually(async () => {
        const lines = apiLines();
        return lines.length >= 2 ? lines : undefined;
      }, 10_000, 'the api lines');
      expect(api.map((l) => l.msg)).toEqual(['webhook re-enabled', 'webhook deleted: its health workflow ends']);
      expect(api[0]).toMatchObject({ was_disabled_for: 'sustained_failures' });
      for (const line of [...lenient.logs, ...strict.logs]) expect(line).not.toContain('hunter2pw');
    } finally {
      await receiver.close();
      await iso.close();
    }
  }, 120_000);
});

describe('PATCH /webhooks/:id in the create body’s shape', () => {
  it('is understood: `{"webhook": {…}}` updates the secret and headers, read back', async () => {
    const acct = await createAccount(sys);
    const hook = await webhook(sys, acct.testKey, 'https://example.com/wrapped', { webhook_secret: 'old', custom_headers: [{ name: 'A', value: '1' }] });
    const res = await call(sys, 'PATCH', `/webhooks/${hook.id}`, { key: acct.testKey, body: { webhook: { webhook_secret: 'x-new', custom_headers: [{ name: 'B', value: '2' }] } } });
    expect(res.status).toBe(201);
    expect(res.body.custom_headers).toEqual([{ name: 'B', value: '2' }]);
    const row = await sys.db.selectFrom('webhooks').select(['webhook_secret', 'custom_headers']).where('id', '=', hook.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ webhook_secret: 'x-new', custom_headers: [{ name: 'B', value: '2' }] });
  });

  it('refuses, with why, the bodies that would change nothing or not what was asked: a url, both shapes, only unknown fields', async () => {
    const acct = await createAccount(sys);
    const hook = await webhook(sys, acct.testKey, 'https://example.com/kept', { webhook_secret: 'kept' });
    const cases: [unknown, string, RegExp][] = [
      [{ url: 'https://example.com/other' }, 'url', /cannot be changed/],
      [{ webhook: { url: 'https://example.com/other', webhook_secret: 'y' } }, 'webhook.url', /cannot be changed/],
      [{ webhook_secret: 'a', webhook: { webhook_secret: 'b' } }, 'webhook', /not both/],
      [{ secret: 'z' }, 'secret', /changes nothing/],
      [{ webhook: { secret: 'z' } }, 'webhook.secret', /changes nothing/],
    ];
    for (const [body, field, message] of cases) {
      const res = await call(sys, 'PATCH', `/webhooks/${hook.id}`, { key: acct.testKey, body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      const error = errorOf(res);
      expect(error.code).toBe('WEBHOOK.INVALID');
      expect(error.errors).toContainEqual({ field, message: expect.stringMatching(message) });
    }
    const row = await sys.db.selectFrom('webhooks').select(['url', 'webhook_secret', 'updated_at', 'created_at']).where('id', '=', hook.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ url: 'https://example.com/kept', webhook_secret: 'kept' });
    expect(row.updated_at.getTime()).toBe(row.created_at.getTime());
  });
});
