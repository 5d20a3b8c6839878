import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_LISTENERS_PER_MODE } from '../../src/listeners/listeners';
import { createHttpClient } from '../../src/outbound/http-client';
import { createListenerTransport } from '../../src/outbound/listener-transport';
import { serverSentEvents } from '../../src/cli/server-sent-events';
import { newId } from '../../src/ids';
import { publish } from '../support/events';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { eventually } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

/** Listeners through the API: their stream, their answers, and why they are no way out of the server. */
let sys: TestSystem;

beforeAll(async () => {
  sys = await startSystem({ listeners: { graceMs: 60_000, heartbeatMs: 500, maxRetryDelayMs: 1000 } });
});
afterAll(() => sys.close());

async function createListener(acct: Account, body: Record<string, unknown> = {}) {
  const res = await call(sys, 'POST', '/listeners', { key: acct.testKey, body: { listener: { forward_to: 'http://localhost:4000/hook', ...body } } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; url: string; secret: string };
}

/** A stream opened as a client opens it; its events as they come. */
async function openStream(acct: Account, listenerId: string) {
  const controller = new AbortController();
  const res = await fetch(`${sys.baseUrl}/listeners/${listenerId}/stream`, {
    headers: { authorization: 'Basic ' + Buffer.from(`${acct.testKey}:`).toString('base64') },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const events = serverSentEvents(res.body as unknown as AsyncIterable<Buffer>);
  return { next: async () => (await events.next()).value!, close: () => controller.abort() };
}

/** Every resolver call the outbound client makes. */
function lookupSpy() {
  const asked: string[] = [];
  return { asked, lookup: async (host: string) => { asked.push(host); return ['127.0.0.1']; } };
}

describe('listeners', () => {
  it('stream each delivery attempt and record the answer their client posts back', async () => {
    const acct = await createAccount(sys);
    const listener = await createListener(acct, { event_types: ['tracker.*'] });
    expect(listener).toMatchObject({ url: `listen://${listener.id}`, event_types: ['tracker.*'], mode: 'test', forward_to: 'http://localhost:4000/hook' });
    expect(listener.secret).toMatch(/^whsec_/);
    const stream = await openStream(acct, listener.id);
    expect(JSON.parse((await stream.next()).data)).toEqual({ object: 'ListenerReady', listener_id: listener.id, heartbeat_ms: 500 });

    // The engine's transport, as the worker runs it: queued for the stream, then waiting for the answer.
    const transport = createListenerTransport(sys.db, sys.config.databaseUrl);
    const deliveryId = newId('payload');
    const sending = transport.post(listener.url, { 'Content-Type': 'application/json', 'X-Shiphook-Delivery-Id': deliveryId }, '{"id":"evt_1"}', 10_000);
    const request = await stream.next();
    expect(request.event).toBe('request');
    expect(JSON.parse(request.data)).toMatchObject({ object: 'ListenerRequest', id: deliveryId, body: '{"id":"evt_1"}', headers: { 'X-Shiphook-Delivery-Id': deliveryId } });

    const bad = await call(sys, 'POST', `/listeners/${listener.id}/requests/${deliveryId}/answer`, { key: acct.testKey, body: { status: 700, total_time: 3 } });
    expect(bad.status).toBe(422);
    expect(errorOf(bad).errors).toEqual([{ field: 'status', message: 'must be 0 to 599' }]);
    const answered = await call(sys, 'POST', `/listeners/${listener.id}/requests/${deliveryId}/answer`, { key: acct.testKey, body: { status: 202, headers: { 'x-local': 'yes' }, body: 'taken', total_time: 7 } });
    expect(answered.status).toBe(200);
    expect(await sending).toEqual({ status: 202, headers: { 'x-local': 'yes' }, body: 'taken', totalTimeMs: 7 });
    // Once only: the attempt took it.
    const twice = await call(sys, 'POST', `/listeners/${listener.id}/requests/${deliveryId}/answer`, { key: acct.testKey, body: { status: 200, total_time: 1 } });
    expect(twice.status).toBe(404);
    // Another user cannot see, stream or answer it.
    const other = await createAccount(sys);
    expect((await call(sys, 'GET', '/listeners', { key: other.testKey })).body.listeners).toEqual([]);
    expect((await call(sys, 'POST', `/listeners/${listener.id}/requests/${deliveryId}/answer`, { key: other.testKey, body: { status: 200, total_time: 1 } })).status).toBe(404);
    expect((await call(sys, 'GET', `/listeners/${listener.id}/stream`, { key: other.testKey })).status).toBe(404);

    // Removed: its stream says so and ends.
    expect((await call(sys, 'DELETE', `/listeners/${listener.id}`, { key: acct.testKey })).status).toBe(200);
    expect(await stream.next()).toMatchObject({ event: 'gone' });
    stream.close();
  });

  it('are no way out of the server: a listener URL is no webhook URL, and nothing dials out for one', async () => {
    const acct = await createAccount(sys);
    const listener = await createListener(acct);
    const asWebhook = await call(sys, 'POST', '/webhooks', { key: acct.testKey, body: { webhook: { url: listener.url } } });
    expect(asWebhook.status).toBe(422);
    expect(errorOf(asWebhook)).toMatchObject({ code: 'WEBHOOK.INVALID', errors: [{ field: 'webhook.url', message: 'must use https' }] });
    // Not a webhook either: not listed, not found, not deleted as one.
    expect((await call(sys, 'GET', '/webhooks', { key: acct.testKey })).body.webhooks).toEqual([]);
    expect((await call(sys, 'GET', `/webhooks/${listener.id}`, { key: acct.testKey })).status).toBe(404);
    expect((await call(sys, 'DELETE', `/webhooks/${listener.id}`, { key: acct.testKey })).status).toBe(404);

    // The outbound client: a listen:// URL never reaches the resolver or a connection.
    const spy = lookupSpy();
    const withTransport = createHttpClient({ allowHttp: true, allowedNetworks: [], timeoutMs: 300, lookup: spy.lookup, listeners: createListenerTransport(sys.db, sys.config.databaseUrl) });
    const withoutTransport = createHttpClient({ allowHttp: true, allowedNetworks: [], timeoutMs: 300, lookup: spy.lookup });
    try {
      const timedOut = await withTransport.post(listener.url, { 'X-Shiphook-Delivery-Id': newId('payload') }, '{}');
      expect(timedOut).toMatchObject({ status: 0, reason: 'LISTENER_TIMEOUT' });
      const unknown = await withTransport.post('listen://lst_00000000000000000000000000000000', { 'X-Shiphook-Delivery-Id': newId('payload') }, '{}');
      expect(unknown).toMatchObject({ status: 0, reason: 'LISTENER_GONE' });
      expect(await withoutTransport.post(listener.url, {}, '{}')).toMatchObject({ status: 0, reason: 'FAILED' });
      expect(spy.asked).toEqual([]);
    } finally {
      await Promise.all([withTransport.close(), withoutTransport.close()]);
    }
    // A withdrawn request is gone from the queue.
    expect(await sys.db.selectFrom('listener_requests').select('id').where('listener_id', '=', listener.id).execute()).toEqual([]);
  });

  it('take the key\'s mode, a production one only when asked, and a few per user', async () => {
    const acct = await createAccount(sys);
    const production = await call(sys, 'POST', '/listeners', { key: acct.prodKey, body: { listener: {} } });
    expect(production.status).toBe(403);
    expect(errorOf(production)).toMatchObject({ code: 'MODE.CONFLICT', errors: [{ field: 'mode', message: 'must be the key\'s mode (production)' }] });
    const live = await call(sys, 'POST', '/listeners', { key: acct.prodKey, body: { listener: { mode: 'production' } } });
    expect(live.status).toBe(201);
    expect(live.body.mode).toBe('production');
    const badTypes = await call(sys, 'POST', '/listeners', { key: acct.testKey, body: { listener: { event_types: ['tracker'] } } });
    expect(badTypes.status).toBe(422);
    expect(errorOf(badTypes).errors[0]).toMatchObject({ field: 'listener.event_types[0]', message: expect.stringContaining('tracker.*') });

    for (let i = 0; i < MAX_LISTENERS_PER_MODE; i++) await createListener(acct);
    const tooMany = await call(sys, 'POST', '/listeners', { key: acct.testKey, body: { listener: {} } });
    expect(tooMany.status).toBe(403);
    expect(errorOf(tooMany).message).toContain(`At most ${MAX_LISTENERS_PER_MODE} listeners`);
  });

  it('are a replay\'s target like a webhook, by webhook_id, but not with `all` at once', async () => {
    const acct = await createAccount(sys);
    const evt = await publish(sys, acct.user.id, 'test');
    const both = await call(sys, 'POST', `/events/${evt.id}/replay`, { key: acct.testKey, body: { all: true, webhook_id: 'hook_00000000000000000000000000000000' } });
    expect(both.status).toBe(422);
    expect(errorOf(both).errors).toEqual([{ field: 'webhook_id', message: 'give `all` or `webhook_id`, not both' }]);
    const listener = await createListener(acct, { event_types: ['batch.*'] });
    const notTaken = await call(sys, 'POST', `/events/${evt.id}/replay`, { key: acct.testKey, body: { webhook_id: listener.id } });
    expect(notTaken.status).toBe(422);
    expect(errorOf(notTaken).message).toContain(`${listener.id} does not subscribe to tracker.updated`);
  });

  it('end their stream when its client went before it started: the listener is marked seen no more', async () => {
    const acct = await createAccount(sys);
    const listener = await createListener(acct);
    const lastSeen = async () => (await sys.db.selectFrom('listeners').select('last_seen_at').where('id', '=', listener.id).executeTakeFirstOrThrow()).last_seen_at.getTime();
    // The whole request, then the connection closed at once: gone while the server still authorizes it.
    const socket = connect(Number(new URL(sys.origin).port), '127.0.0.1');
    await once(socket, 'connect');
    const auth = Buffer.from(`${acct.testKey}:`).toString('base64');
    socket.end(`GET /v2/listeners/${listener.id}/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic ${auth}\r\n\r\n`);
    socket.resume();
    await once(socket, 'close');
    // A stream left running would mark it seen every heartbeat (500 ms here), and keep it for good.
    await eventually(async () => (Date.now() - (await lastSeen()) > 4 * 500 ? true : undefined), 20_000, 'the listener to be marked seen no more');
  });
});

