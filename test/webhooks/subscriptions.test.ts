import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { untilDisabled, eventStatus, publish, webhook } from '../support/events';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { eventually, type Receiver, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';
import { TEST_ENV } from '../support/test-config';

// Subscriptions: a webhook's `event_types` chooses the events it receives (issue #49).
let sys: TestSystem;
let acct: Account;
const receivers: Receiver[] = [];

beforeAll(async () => {
  sys = await startSystem();
  acct = await createAccount(sys);
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await sys.close();
});

const receiver = async (answer = status(200)) => {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
};
const create = (key: string, hook: Record<string, unknown>) => call(sys, 'POST', '/webhooks', { key, body: { webhook: { url: 'https://example.com/h', ...hook } } });
const update = (key: string, id: string, body: unknown) => call(sys, 'PATCH', `/webhooks/${id}`, { key, body });
const stored = async (key: string, id: string) => (await call(sys, 'GET', `/webhooks/${id}`, { key })).body.event_types;
const deliveryRows = (eventId: string) =>
  sys.db.selectFrom('event_deliveries').select(['webhook_id', 'state']).where('event_id', '=', eventId).orderBy('webhook_id').execute();
const idsAt = (r: Receiver, from = 0) => r.deliveries.slice(from).map((d) => d.json?.id as string);
const ADMIN = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };

describe('event_types on create and update', () => {
  it('is null (every type) when left out, and is stored as a set: each entry once, sorted', async () => {
    const plain = await create(acct.testKey, {});
    expect(plain.status).toBe(201);
    expect(plain.body.event_types).toBeNull();
    const chosen = await create(acct.testKey, { event_types: ['tracker.updated', 'batch.*', 'tracker.updated', 'shipment.*'] });
    expect(chosen.status).toBe(201);
    expect(chosen.body.event_types).toEqual(['batch.*', 'shipment.*', 'tracker.updated']);
    expect(await stored(acct.testKey, chosen.body.id)).toEqual(['batch.*', 'shipment.*', 'tracker.updated']);
    const listed = (await call(sys, 'GET', '/webhooks', { key: acct.testKey })).body.webhooks;
    expect(listed.find((h: { id: string }) => h.id === plain.body.id).event_types).toBeNull();
    expect((await create(acct.testKey, { event_types: null })).body.event_types).toBeNull();
    expect((await create(acct.testKey, { event_types: ['*'] })).body.event_types).toEqual(['*']);
  });

  it('refuses a bad entry by its index with what is valid, an empty list with what to do instead, and saves nothing', async () => {
    const before = (await call(sys, 'GET', '/webhooks', { key: acct.testKey })).body.webhooks.length;
    const unknown = await create(acct.testKey, { event_types: ['tracker.*', 'batch.created', 'tracker.delivered', 5] });
    expect(unknown.status).toBe(422);
    const err = errorOf(unknown);
    expect(err.code).toBe('WEBHOOK.INVALID');
    expect(err.errors).toEqual([
      { field: 'webhook.event_types[2]', message: expect.stringMatching(/^"tracker.delivered" is not an event type or pattern: each entry is an event type \(batch.created, .*\), a family wildcard \(batch.\*, .*, tracker.\*\) or \* for every type$/) },
      { field: 'webhook.event_types[3]', message: expect.stringMatching(/^must be a string: /) },
    ]);
    const empty = await create(acct.testKey, { event_types: [] });
    expect(errorOf(empty).errors).toEqual([{ field: 'webhook.event_types', message: expect.stringContaining('a webhook that wants no events should be deleted or disabled') }]);
    const notAList = await create(acct.testKey, { event_types: 'tracker.*' });
    expect(errorOf(notAList).errors).toEqual([{ field: 'webhook.event_types', message: expect.stringContaining('must be a list of event types') }]);
    const tooMany = await create(acct.testKey, { event_types: Array.from({ length: 101 }, () => 'nope') });
    expect(errorOf(tooMany).errors).toEqual([{ field: 'webhook.event_types', message: 'must have at most 100 entries' }]);
    expect((await call(sys, 'GET', '/webhooks', { key: acct.testKey })).body.webhooks.length).toBe(before);
  });

  it('PATCH: left out keeps it, a list replaces it, null restores every type; either shape; an update of event_types alone re-enables', async () => {
    const hook = (await create(acct.testKey, { event_types: ['tracker.*'] })).body;
    // Only event_types: not refused as "changes nothing".
    const replaced = await update(acct.testKey, hook.id, { event_types: ['batch.created', 'report.*'] });
    expect(replaced.status).toBe(201);
    expect(replaced.body.event_types).toEqual(['batch.created', 'report.*']);
    const headersOnly = await update(acct.testKey, hook.id, { custom_headers: [{ name: 'X-Team', value: 'a' }] });
    expect(headersOnly.body.event_types).toEqual(['batch.created', 'report.*']);
    const wrapped = await update(acct.testKey, hook.id, { webhook: { event_types: ['claims.*'] } });
    expect(wrapped.body.event_types).toEqual(['claims.*']);
    // Refused, by the field as sent, and the webhook keeps its subscription.
    const badTop = await update(acct.testKey, hook.id, { event_types: ['claims.*', 'Claims.Approved'] });
    expect(errorOf(badTop).errors).toEqual([{ field: 'event_types[1]', message: expect.stringContaining('(event types are lower case: claims.approved)') }]);
    const badWrapped = await update(acct.testKey, hook.id, { webhook: { event_types: ['tracker'] } });
    expect(errorOf(badWrapped).errors).toEqual([{ field: 'webhook.event_types[0]', message: expect.stringContaining('(a whole family is written tracker.*)') }]);
    expect(errorOf(await update(acct.testKey, hook.id, { event_types: [] })).errors[0].field).toBe('event_types');
    expect(await stored(acct.testKey, hook.id)).toEqual(['claims.*']);
    // A disabled webhook: changing its subscription re-enables it, as any update does.
    await sys.db.updateTable('webhooks').set({ disabled_at: new Date(), disabled_reason: 'endpoint_gone' }).where('id', '=', hook.id).execute();
    const reset = await update(acct.testKey, hook.id, { event_types: null });
    expect(reset.body).toMatchObject({ event_types: null, disabled_at: null });
  });
});

describe('delivering by subscription', () => {
  it('creates deliveries only for the webhooks subscribed to an event\'s type, in single and batch publishes', async () => {
    const a = await createAccount(sys);
    const [rTracker, rBatch, rAll] = [await receiver(), await receiver(), await receiver()];
    const tracker = await webhook(sys, a.testKey, rTracker.url, { event_types: ['tracker.*'] });
    const batch = await webhook(sys, a.testKey, rBatch.url, { event_types: ['batch.created'] });
    const all = await webhook(sys, a.testKey, rAll.url);
    const e = await publish(sys, a.user.id, 'test', { description: 'tracker.updated' });
    expect(e.pending_urls.sort()).toEqual([rTracker.url, rAll.url].sort());
    expect((await deliveryRows(e.id)).map((r) => r.webhook_id)).toEqual([tracker.id, all.id].sort());
    await eventStatus(sys, a.testKey, e.id, 'completed');
    const res = await call(sys, 'POST', '/admin/v1/events/batch', {
      headers: ADMIN,
      body: { events: ['batch.created', 'batch.updated'].map((description) => ({ user_id: a.user.id, mode: 'test', description, result: { object: 'Batch', id: 'batch_1' } })) },
    });
    expect(res.status).toBe(201);
    const [created, updated] = res.body.events.map((x: { id: string }) => x.id);
    expect((await deliveryRows(created)).map((r) => r.webhook_id)).toEqual([batch.id, all.id].sort());
    expect((await deliveryRows(updated)).map((r) => r.webhook_id)).toEqual([all.id]);
    for (const id of [created, updated]) await eventStatus(sys, a.testKey, id, 'completed');
    expect(idsAt(rTracker)).toEqual([e.id]);
    expect(idsAt(rBatch)).toEqual([created]);
    expect(idsAt(rAll).sort()).toEqual([e.id, created, updated].sort());
  });

  it('an event no webhook wants is completed at once and starts no workflow', async () => {
    const a = await createAccount(sys);
    const r = await receiver();
    await webhook(sys, a.testKey, r.url, { event_types: ['tracker.*'] });
    const unwanted = await publish(sys, a.user.id, 'test', { description: 'report.new' });
    expect(unwanted).toMatchObject({ status: 'completed', pending_urls: [], completed_urls: [] });
    expect(await deliveryRows(unwanted.id)).toEqual([]);
    const row = await sys.db.selectFrom('events').select(['status', 'dispatched_at']).where('id', '=', unwanted.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'completed', dispatched_at: expect.any(Date) });
    // A wanted event published after it has been dispatched and delivered: the dispatchers had their chance.
    const wanted = await publish(sys, a.user.id, 'test', { description: 'tracker.created' });
    await eventStatus(sys, a.testKey, wanted.id, 'completed');
    const temporal = await sys.temporal();
    await expect(temporal.workflow.getHandle(wanted.id).describe()).resolves.toMatchObject({ workflowId: wanted.id });
    await expect(temporal.workflow.getHandle(unwanted.id).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(idsAt(r)).toEqual([wanted.id]);
  });

  it('a test event goes to its webhook whatever the webhook subscribes to', async () => {
    const a = await createAccount(sys);
    const r = await receiver();
    const hook = await webhook(sys, a.testKey, r.url, { event_types: ['batch.*'] });
    const sent = await call(sys, 'POST', `/webhooks/${hook.id}/test`, { key: a.testKey, body: { description: 'tracker.updated' } });
    expect(sent.status).toBe(201);
    expect(sent.body.pending_urls).toEqual([r.url]);
    await eventStatus(sys, a.testKey, sent.body.id, 'completed');
    expect(r.deliveries.map((d) => [d.json.id, d.json.description])).toEqual([[sent.body.id, 'tracker.updated']]);
  });
});

describe('replay and recover after a subscription changes', () => {
  it('a change applies to later events; a replay goes where the event was delivered; {"all": true} follows today\'s subscriptions', async () => {
    const a = await createAccount(sys);
    const [rA, rB] = [await receiver(status(500)), await receiver()];
    const hookA = await webhook(sys, a.testKey, rA.url, { event_types: ['tracker.*'] });
    const hookB = await webhook(sys, a.testKey, rB.url, { event_types: ['batch.*'] });
    const first = await publish(sys, a.user.id, 'test', { description: 'tracker.updated' });
    await eventStatus(sys, a.testKey, first.id, 'failed', 60_000);
    // A now takes batches only (the update also re-enables it, once its failures have disabled it); B takes trackers.
    await untilDisabled(sys, a.testKey, hookA.id);
    await update(a.testKey, hookA.id, { event_types: ['batch.*'] });
    await update(a.testKey, hookB.id, { event_types: ['tracker.updated'] });
    rA.answer(status(200));
    const later = await publish(sys, a.user.id, 'test', { description: 'tracker.updated' });
    expect((await deliveryRows(later.id)).map((r) => r.webhook_id)).toEqual([hookB.id]);
    await eventStatus(sys, a.testKey, later.id, 'completed');

    // A replay delivers what was not acknowledged, to A, which no longer subscribes: the event was A's.
    const sentToA = rA.deliveries.length;
    const replayed = await call(sys, 'POST', `/events/${first.id}/replay`, { key: a.testKey, body: {} });
    expect(replayed.status).toBe(200);
    await eventStatus(sys, a.testKey, first.id, 'completed');
    expect(idsAt(rA, sentToA)).toEqual([first.id]);
    expect(idsAt(rB)).toEqual([later.id]);

    // {"all": true}: the webhooks enabled now that subscribe to its type now: B, not A.
    const all = await call(sys, 'POST', `/events/${first.id}/replay`, { key: a.testKey, body: { all: true } });
    expect(all.status).toBe(200);
    expect(all.body.pending_urls).toEqual([rB.url]);
    await eventStatus(sys, a.testKey, first.id, 'completed');
    await rB.waitFor(2);
    expect(idsAt(rB)).toEqual([later.id, first.id]);
    expect(idsAt(rA, sentToA)).toEqual([first.id]);

    // None subscribed now: refused with why, and nothing is reset.
    await update(a.testKey, hookB.id, { event_types: ['report.*'] });
    const rowsBefore = await deliveryRows(first.id);
    const none = await call(sys, 'POST', `/events/${first.id}/replay`, { key: a.testKey, body: { all: true } });
    expect(none.status).toBe(422);
    expect(errorOf(none)).toMatchObject({ code: 'WEBHOOK.INVALID', message: expect.stringContaining('no enabled webhook of this account and mode subscribes to tracker.updated') });
    expect(await deliveryRows(first.id)).toEqual(rowsBefore);
    expect((await call(sys, 'GET', `/events/${first.id}`, { key: a.testKey })).body.status).toBe('completed');
  }, 120_000);

  it('recover takes the events the webhook had a delivery to, and of those published while it was disabled only the types it subscribes to', async () => {
    const a = await createAccount(sys);
    const r = await receiver(status(500));
    const hook = await webhook(sys, a.testKey, r.url, { event_types: ['tracker.*', 'batch.*'] });
    const since = new Date(Date.now() - 1000).toISOString();
    const failed = await publish(sys, a.user.id, 'test', { description: 'tracker.updated' });
    await eventStatus(sys, a.testKey, failed.id, 'failed', 60_000);
    await sys.db.updateTable('webhooks').set({ disabled_at: new Date(), disabled_reason: 'endpoint_gone' }).where('id', '=', hook.id).execute();
    // Published while it was disabled: no delivery to it at all.
    const whileDisabled = {
      batch: await publish(sys, a.user.id, 'test', { description: 'batch.created' }),
      tracker: await publish(sys, a.user.id, 'test', { description: 'tracker.created' }),
      report: await publish(sys, a.user.id, 'test', { description: 'report.new' }),
    };
    for (const e of Object.values(whileDisabled)) expect(await deliveryRows(e.id)).toEqual([]);
    // Re-enabled by the update that narrows it to batches; the endpoint is fixed.
    expect((await update(a.testKey, hook.id, { event_types: ['batch.*'] })).body.disabled_at).toBeNull();
    r.answer(status(200));
    const sent = r.deliveries.length;

    const res = await call(sys, 'POST', `/webhooks/${hook.id}/recover`, { key: a.testKey, body: { since } });
    expect(res.status).toBe(202);
    expect(res.body.matched).toBe(2);
    await eventually(async () => {
      const p = await call(sys, 'GET', `/recoveries/${res.body.id}`, { key: a.testKey });
      return p.body.status === 'done' && p.body.undelivered === 0 ? true : undefined;
    }, 60_000, 'the recovery to deliver everything');
    const temporal = await sys.temporal();
    for (const e of [failed, whileDisabled.batch]) await temporal.workflow.getHandle(e.id).result();
    expect(idsAt(r, sent).sort()).toEqual([failed.id, whileDisabled.batch.id].sort());
    for (const e of [whileDisabled.tracker, whileDisabled.report]) expect(await deliveryRows(e.id)).toEqual([]);
  }, 120_000);
});
