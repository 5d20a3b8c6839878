import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { eventStatus, publish, runSettled, untilDisabled, webhook } from '../support/events';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { logFile } from '../support/log-capture';
import { eventually, type Receiver, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem, testConfig } from '../support/system';

// POST /v2/webhooks/:id/recover and GET /v2/recoveries/:id: "redeliver what my endpoint missed since T".
let sys: TestSystem;

beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

const recover = (key: string, hookId: string, body: unknown) => call(sys, 'POST', `/webhooks/${hookId}/recover`, { key, body });
const idsAt = (r: Receiver, from = 0) => r.deliveries.slice(from).map((d) => d.json?.id as string);
/** The delivery rows of these events, as the database has them. */
const deliveryRows = (eventIds: string[]) =>
  sys.db.selectFrom('event_deliveries').select(['event_id', 'webhook_id', 'state', 'attempts']).where('event_id', 'in', eventIds).orderBy('event_id').orderBy('webhook_id').execute();
const deliveryOf = async (eventId: string, webhookId: string) =>
  (await sys.db.selectFrom('event_deliveries').select(['state', 'attempts']).where('event_id', '=', eventId).where('webhook_id', '=', webhookId).executeTakeFirstOrThrow());
/** This process's log lines (the api's) about recovery `id`. */
const logLines = (id: string) =>
  readFileSync(logFile(inject('logDir'), `tests-${process.pid}`), 'utf8').split('\n').filter((l) => l.includes(id)).map((l) => JSON.parse(l)).filter((l) => String(l.msg).startsWith('recovery'));

describe('recovering a webhook', () => {
  it('redelivers to that webhook, and only to it, the events of the window it missed; the handle reaches its end', async () => {
    const a = await createAccount(sys);
    const mine = await startReceiver(status(500));
    const elsewhere = await startReceiver(status(500)); // the events' other URL, down for good
    const hook = await webhook(sys, a.testKey, mine.url);
    const otherHook = await webhook(sys, a.testKey, elsewhere.url);
    // Missed, but before the window.
    const before = await publish(sys, a.user.id, 'test');
    await eventStatus(sys, a.testKey, before.id, 'failed', 60_000);
    const since = new Date(new Date(before.created_at).getTime() + 1).toISOString();
    // Those failures may disable the webhooks before the next events: both re-enabled, so each event has both URLs.
    const reenable = (id: string) => call(sys, 'PATCH', `/webhooks/${id}`, { key: a.testKey, body: {} });
    await Promise.all([reenable(hook.id), reenable(otherHook.id)]);
    // Delivered to this webhook in the window: never sent again.
    mine.answer(status(200));
    const delivered = await publish(sys, a.user.id, 'test');
    await eventually(async () => ((await deliveryOf(delivered.id, hook.id)).state === 'completed' ? true : undefined), 20_000, 'the delivered event');
    await eventStatus(sys, a.testKey, delivered.id, 'failed', 60_000);
    await reenable(otherHook.id);
    mine.answer(status(500));
    const missed = [await publish(sys, a.user.id, 'test'), await publish(sys, a.user.id, 'test')];
    for (const e of missed) await eventStatus(sys, a.testKey, e.id, 'failed', 60_000);
    // Other accounts' and the other mode's missed events of the same window stay as they are.
    const b = await createAccount(sys);
    await webhook(sys, b.testKey, elsewhere.url);
    await webhook(sys, a.prodKey, elsewhere.url);
    const bystanders = [await publish(sys, b.user.id, 'test'), await publish(sys, a.user.id, 'production')];
    for (const [e, key] of [[bystanders[0]!, b.testKey], [bystanders[1]!, a.prodKey]] as const) await eventStatus(sys, key, e.id, 'failed', 60_000);
    const untouched = [before, delivered, ...bystanders].map((e) => e.id);
    const rowsBefore = await deliveryRows(untouched);
    const otherRowsBefore = await deliveryRows(missed.map((e) => e.id)).then((rows) => rows.filter((r) => r.webhook_id === otherHook.id));

    // The health workflow disables it after these failures: a recovery wants it re-enabled first.
    await untilDisabled(sys, a.testKey, hook.id);
    const refused = await recover(a.testKey, hook.id, { since });
    expect(refused.status).toBe(422);
    expect(errorOf(refused)).toMatchObject({ code: 'WEBHOOK.INVALID', message: expect.stringContaining('re-enable it first') });
    for (const e of missed) expect((await deliveryOf(e.id, hook.id)).state).toBe('failed');
    expect(await sys.db.selectFrom('replays').select('id').where('webhook_id', '=', hook.id).execute()).toEqual([]);

    // Another account's key, or the other mode's, finds no such webhook.
    expect((await recover(b.testKey, hook.id, { since })).status).toBe(404);
    expect((await recover(a.prodKey, hook.id, { since })).status).toBe(404);

    // The endpoint is fixed and the webhook re-enabled: recovered.
    expect((await reenable(hook.id)).status).toBe(201);
    mine.answer(status(200));
    const sentBefore = { mine: mine.deliveries.length, elsewhere: elsewhere.deliveries.length };
    const asked = Date.now();
    const res = await recover(a.testKey, hook.id, { since });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ object: 'Recovery', webhook_id: hook.id, since, matched: 2, capped: false });
    expect(res.body.id).toMatch(/^replay_/);
    expect(Math.abs(new Date(res.body.until).getTime() - asked)).toBeLessThan(10_000); // until: now
    let last: unknown;
    const done = await eventually(async () => {
      const p = await call(sys, 'GET', `/recoveries/${res.body.id}`, { key: a.testKey });
      last = p.body;
      return p.body.status === 'done' && p.body.undelivered === 0 ? p.body : undefined;
    }, 60_000, 'the recovery to end with everything delivered').catch(async (err) => {
      throw new Error(`${err.message}; last ${JSON.stringify(last)}; rows ${JSON.stringify(await deliveryRows(missed.map((e) => e.id)))}`);
    });
    expect(done).toMatchObject({ id: res.body.id, matched: 2, started: 2, remaining: 0, undelivered: 0, ended_at: expect.any(String) });
    // Each run has settled (failed still for the other URL: it waits for a replay), so nothing more can arrive from it.
    for (const e of missed) await runSettled(sys, e.id);
    expect(idsAt(mine, sentBefore.mine).sort()).toEqual(missed.map((e) => e.id).sort());
    expect(elsewhere.deliveries.length).toBe(sentBefore.elsewhere);
    for (const e of missed) {
      expect(await deliveryOf(e.id, hook.id)).toEqual({ state: 'completed', attempts: 1 });
      const { status: state, completed_urls, pending_urls } = (await call(sys, 'GET', `/events/${e.id}`, { key: a.testKey })).body;
      expect({ state, completed_urls, pending_urls }).toEqual({ state: 'failed', completed_urls: [mine.url], pending_urls: [elsewhere.url] });
    }
    const otherRowsAfter = (await deliveryRows(missed.map((e) => e.id))).filter((r) => r.webhook_id === otherHook.id);
    expect(otherRowsAfter).toEqual(otherRowsBefore);
    expect(await deliveryRows(untouched)).toEqual(rowsBefore);

    // Its handle is the account's and mode's only; the start was logged with what it matched.
    expect((await call(sys, 'GET', `/recoveries/${res.body.id}`, { key: b.testKey })).status).toBe(404);
    expect((await call(sys, 'GET', `/recoveries/${res.body.id}`, { key: a.prodKey })).status).toBe(404);
    const started = await eventually(async () => logLines(res.body.id).find((l) => l.msg === 'recovery started'), 5000, 'the start line');
    expect(started).toMatchObject({ level: 'info', webhook_id: hook.id, matched: 2, since });
    await Promise.all([mine.close(), elsewhere.close()]);
  }, 180_000);

  it('redelivers the events published while the webhook was disabled, once re-enabled; not a test event of another webhook, nor events from before a webhook', async () => {
    const a = await createAccount(sys);
    const gone = await startReceiver(status(410));
    const hook = await webhook(sys, a.testKey, gone.url);
    await publish(sys, a.user.id, 'test'); // answered 410: disabled at once
    await untilDisabled(sys, a.testKey, hook.id);
    const since = new Date().toISOString();
    // Published while it was disabled: no delivery to it was ever tried.
    const missed = [await publish(sys, a.user.id, 'test'), await publish(sys, a.user.id, 'test')];
    for (const e of missed) expect(await deliveryRows([e.id])).toEqual([]);
    // A webhook made after them, and a test event to it alone.
    const later = await startReceiver(status(200));
    const laterHook = await webhook(sys, a.testKey, later.url);
    const testEvent = await call(sys, 'POST', `/webhooks/${laterHook.id}/test`, { key: a.testKey });
    expect(testEvent.status).toBe(201);
    await eventStatus(sys, a.testKey, testEvent.body.id, 'completed');

    const none = await recover(a.testKey, laterHook.id, { since });
    expect(none.status).toBe(202);
    expect(none.body.matched).toBe(0); // its only event in the window was delivered; the others came before it

    gone.answer(status(200));
    expect((await call(sys, 'PATCH', `/webhooks/${hook.id}`, { key: a.testKey, body: {} })).status).toBe(201);
    const res = await recover(a.testKey, hook.id, { since });
    expect(res.status).toBe(202);
    expect(res.body.matched).toBe(2);
    await eventually(async () => {
      const p = await call(sys, 'GET', `/recoveries/${res.body.id}`, { key: a.testKey });
      return p.body.status === 'done' && p.body.undelivered === 0 ? true : undefined;
    }, 60_000, 'the recovery to end with everything delivered');
    const temporal = await sys.temporal();
    for (const e of missed) await temporal.workflow.getHandle(e.id).result();
    expect(idsAt(gone, 1).sort()).toEqual(missed.map((e) => e.id).sort());
    for (const e of missed) {
      expect(await deliveryOf(e.id, hook.id)).toEqual({ state: 'completed', attempts: 1 });
      expect((await call(sys, 'GET', `/events/${e.id}`, { key: a.testKey })).body).toMatchObject({ status: 'completed', completed_urls: [gone.url], pending_urls: [] });
    }
    expect(await deliveryRows([testEvent.body.id])).toEqual([{ event_id: testEvent.body.id, webhook_id: laterHook.id, state: 'completed', attempts: 1 }]);
    await Promise.all([gone.close(), later.close()]);
  }, 180_000);

  it('checks the window: at most the configured maximum, since before until, dates as dates; nothing is started for a refused one', async () => {
    const a = await createAccount(sys);
    const receiver = await startReceiver();
    const hook = await webhook(sys, a.testKey, receiver.url);
    const day = 86_400_000;
    const wide = await recover(a.testKey, hook.id, { since: new Date(Date.now() - 15 * day).toISOString() });
    expect(wide.status).toBe(422);
    expect(errorOf(wide)).toMatchObject({ code: 'PARAMETER.FORBIDDEN', errors: [{ field: 'since', message: expect.stringContaining('at most 14 days before until') }] });
    const wideUntil = await recover(a.testKey, hook.id, { since: '2026-01-01T00:00:00Z', until: '2026-01-20T00:00:00Z' });
    expect(errorOf(wideUntil).errors).toEqual([{ field: 'since', message: expect.stringContaining('at most 14 days') }]);
    const reversed = await recover(a.testKey, hook.id, { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' });
    expect(errorOf(reversed)).toMatchObject({ code: 'PARAMETER.FORBIDDEN', errors: [{ field: 'since', message: 'must be earlier than until (and than now)' }] });
    const same = await recover(a.testKey, hook.id, { since: '2026-01-01T00:00:00Z', until: '2026-01-01T00:00:00Z' });
    expect(same.status).toBe(422);
    const future = await recover(a.testKey, hook.id, { since: new Date(Date.now() + day).toISOString() });
    expect(errorOf(future).errors).toEqual([{ field: 'since', message: 'must be earlier than until (and than now)' }]);
    const notADate = await recover(a.testKey, hook.id, { since: 'yesterday', until: 'later' });
    expect(errorOf(notADate)).toMatchObject({ code: 'DATE.PARSE.FAILURE', errors: [{ field: 'since' }, { field: 'until' }] });
    const missing = await recover(a.testKey, hook.id, {});
    expect(errorOf(missing)).toMatchObject({ code: 'PARAMETER.REQUIRED', errors: [{ field: 'since', message: 'is required' }] });
    expect(await sys.db.selectFrom('replays').select('id').where('webhook_id', '=', hook.id).execute()).toEqual([]);

    // Inside the maximum with nothing missed: a handle that has already ended, both ends logged.
    const ok = await recover(a.testKey, hook.id, { since: new Date(Date.now() - 13 * day).toISOString() });
    expect(ok.status).toBe(202);
    expect(ok.body).toMatchObject({ matched: 0, started: 0, status: 'done', undelivered: 0, ended_at: expect.any(String) });
    const lines = await eventually(async () => {
      const found = logLines(ok.body.id);
      return found.length >= 2 ? found : undefined;
    }, 5000, 'the start and end lines');
    expect(lines.map((l) => [l.level, l.msg])).toEqual([['info', 'recovery started'], ['info', 'recovery ended: every matched event was started again']]);
    expect(receiver.deliveries).toHaveLength(0);
    await receiver.close();
  });

  it('a deleted webhook and an unknown handle are 404', async () => {
    const a = await createAccount(sys);
    const hook = await webhook(sys, a.testKey, 'http://127.0.0.1:9/hook');
    expect((await call(sys, 'DELETE', `/webhooks/${hook.id}`, { key: a.testKey })).status).toBe(200);
    const res = await recover(a.testKey, hook.id, { since: new Date(Date.now() - 60_000).toISOString() });
    expect(res.status).toBe(404);
    expect(errorOf(res).code).toBe('NOT_FOUND');
    expect((await call(sys, 'GET', '/recoveries/replay_00000000000000000000000000000000', { key: a.testKey })).status).toBe(404);
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await call(sys, 'GET', '/openapi.json')).body;
    expect(Object.keys(doc.paths['/v2/webhooks/{id}/recover'].post.responses)).toContain('202');
    expect(doc.paths['/v2/recoveries/{id}'].get).toBeDefined();
  });
});

describe('the rate limit', () => {
  let limited: TestSystem;
  let acct: Account;
  beforeAll(async () => {
    limited = await startSystem({ rateLimit: { ...testConfig().rateLimit, replaysPerMinute: 2 } }, { rateLimitWindowSeconds: 60 });
    acct = await createAccount(limited);
  });
  afterAll(() => limited.close());

  it('recoveries count in the replays bucket', async () => {
    const hook = await webhook(limited, acct.testKey, 'http://127.0.0.1:9/hook');
    const since = new Date(Date.now() - 60_000).toISOString();
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await call(limited, 'POST', `/webhooks/${hook.id}/recover`, { key: acct.testKey, body: { since } }));
    expect(answers.map((r) => r.status)).toEqual([202, 202, 429]);
    expect(errorOf(answers[2]!).code).toBe('RATE_LIMITED');
  });
});
