import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/events/types';
import { newId } from '../../src/ids';
import { eventStatus, publish, untilDisabled, webhook } from '../support/events';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { eventually, startReceiver } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';
import { TEST_ENV } from '../support/test-config';

let sys: TestSystem;
let acct: Account;
const ADMIN = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };

beforeAll(async () => {
  sys = await startSystem();
  acct = await createAccount(sys);
});
afterAll(() => sys.close());

describe('GET /events', () => {
  it('lists summaries newest first with has_more, paginated with before_id', async () => {
    const a = await createAccount(sys);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await publish(sys, a.user.id, 'test')).id);
    const first = await call(sys, 'GET', '/events?page_size=2', { key: a.testKey });
    expect(first.status).toBe(200);
    expect(first.body.events.map((e: any) => e.id)).toEqual([ids[4], ids[3]]);
    expect(first.body.has_more).toBe(true);
    expect(Object.keys(first.body.events[0]).sort()).toEqual(['created_at', 'description', 'id', 'mode', 'object', 'status', 'updated_at']);
    expect(first.body.events[0].created_at).toMatch(/\.\d{3}Z$/);
    const next = await call(sys, 'GET', `/events?page_size=10&before_id=${ids[3]}`, { key: a.testKey });
    expect(next.body.events.map((e: any) => e.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(next.body.has_more).toBe(false);
    const bad = await call(sys, 'GET', '/events?page_size=500', { key: a.testKey });
    expect(bad.status).toBe(422);
    const badDate = await call(sys, 'GET', '/events?start_datetime=never', { key: a.testKey });
    expect(errorOf(badDate).code).toBe('DATE.PARSE.FAILURE');
  });

  it('a test key never sees production events, nor another account’s', async () => {
    const prod = await publish(sys, acct.user.id, 'production');
    const list = await call(sys, 'GET', '/events?page_size=100', { key: acct.testKey });
    expect(list.body.events.map((e: any) => e.id)).not.toContain(prod.id);
    expect((await call(sys, 'GET', `/events/${prod.id}`, { key: acct.testKey })).status).toBe(404);
    const other = await createAccount(sys);
    expect((await call(sys, 'GET', `/events/${prod.id}`, { key: other.prodKey })).status).toBe(404);
    expect((await call(sys, 'GET', `/events/${prod.id}/payloads`, { key: other.prodKey })).status).toBe(404);
    expect((await call(sys, 'POST', `/events/${prod.id}/replay`, { key: other.prodKey })).status).toBe(404);
    const own = await call(sys, 'GET', `/events/${prod.id}`, { key: acct.prodKey });
    expect(own.status).toBe(200);
  });
});

describe('GET /events/:id and payloads', () => {
  it('returns the Event without result', async () => {
    const event = await publish(sys, acct.user.id, 'test');
    const res = await call(sys, 'GET', `/events/${event.id}`, { key: acct.testKey });
    expect(res.body).toMatchObject({ id: event.id, object: 'Event', mode: 'test', description: 'tracker.updated', previous_attributes: { status: 'pre_transit' }, pending_urls: [], completed_urls: [] });
    expect(res.body).not.toHaveProperty('result');
  });

  it('unknown payload → 404 PAYLOAD.NOT_FOUND', async () => {
    const event = await publish(sys, acct.user.id, 'test');
    const res = await call(sys, 'GET', `/events/${event.id}/payloads/payload_00000000000000000000000000000000`, { key: acct.testKey });
    expect(res.status).toBe(404);
    expect(errorOf(res).code).toBe('PAYLOAD.NOT_FOUND');
  });
});

describe('POST /admin/v1/events', () => {
  it('accepts each of the 23 event types of the API specification, 6 and refuses others', async () => {
    expect(EVENT_TYPES).toHaveLength(23);
    const bad = await call(sys, 'POST', '/admin/v1/events', { headers: ADMIN, body: { user_id: acct.user.id, mode: 'test', description: 'tracker.exploded', result: { object: 'Tracker' } } });
    expect(bad.status).toBe(422);
    expect(errorOf(bad).errors).toEqual([{ field: 'description', message: expect.any(String) }]);
    const ok = await publish(sys, acct.user.id, 'test', { description: 'batch.created', result: { object: 'Batch', id: 'batch_1' } });
    expect(ok.description).toBe('batch.created');
  });

  it('requires result to be an object with a string object, a real user and a mode', async () => {
    const res = await call(sys, 'POST', '/admin/v1/events', { headers: ADMIN, body: { user_id: 'user_x', mode: 'staging', description: 'tracker.created', result: { id: 1 } } });
    expect(res.status).toBe(422);
    expect(errorOf(res).errors.map((e: any) => e.field).sort()).toEqual(['mode', 'result', 'user_id']);
    const ghost = await call(sys, 'POST', '/admin/v1/events', { headers: ADMIN, body: { user_id: 'user_00000000000000000000000000000000', mode: 'test', description: 'tracker.created', result: { object: 'Tracker' } } });
    expect(ghost.status).toBe(422);
    expect(await sys.db.selectFrom('events').select('id').where('user_id', '=', 'user_00000000000000000000000000000000').execute()).toEqual([]);
  });

  it('needs the admin token', async () => {
    const res = await call(sys, 'POST', '/admin/v1/events', { body: {} });
    expect(res.status).toBe(401);
  });
});

describe('replay', () => {
  it('a failed event is replayed after the receiver recovers → completed; earlier payloads remain', async () => {
    const a = await createAccount(sys);
    const receiver = await startReceiver((_d, _i, res) => res.writeHead(500).end());
    const hook = await webhook(sys, a.testKey, receiver.url);
    const event = await publish(sys, a.user.id, 'test');
    await eventStatus(sys, a.testKey, event.id, 'failed', 60_000); // four attempts; slow on a loaded machine
    // The health workflow disables the webhook after 4 failures spanning ≥ 1 s; re-enable it.
    await untilDisabled(sys, a.testKey, hook.id, 10_000);
    await call(sys, 'PATCH', `/webhooks/${hook.id}`, { key: a.testKey, body: {} });
    receiver.answer((_d, _i, res) => res.writeHead(200).end('ok'));
    const replayed = await call(sys, 'POST', `/events/${event.id}/replay`, { key: a.testKey });
    expect(replayed.status).toBe(200);
    expect(replayed.body).toMatchObject({ id: event.id, object: 'Event' });
    expect(replayed.body).not.toHaveProperty('result');
    await eventStatus(sys, a.testKey, event.id, 'completed');
    const codes = (await call(sys, 'GET', `/events/${event.id}/payloads`, { key: a.testKey })).body.payloads.map((p: any) => p.response_code);
    expect(codes.filter((c: number) => c === 500)).toHaveLength(4);
    expect(codes.filter((c: number) => c === 200)).toHaveLength(1);
    await receiver.close();
  });

  it('{all: true} redelivers to every webhook configured now; without it only to what is pending', async () => {
    const a = await createAccount(sys);
    const first = await startReceiver();
    await webhook(sys, a.testKey, first.url);
    const event = await publish(sys, a.user.id, 'test');
    await eventStatus(sys, a.testKey, event.id, 'completed');
    const second = await startReceiver();
    await webhook(sys, a.testKey, second.url);
    await call(sys, 'POST', `/events/${event.id}/replay`, { key: a.testKey });
    // The replay's run has ended (nothing was pending), so nothing more can arrive from it.
    await (await sys.temporal()).workflow.getHandle(event.id).result();
    expect(first.deliveries).toHaveLength(1);
    expect(second.deliveries).toHaveLength(0);
    const all = await call(sys, 'POST', `/events/${event.id}/replay`, { key: a.testKey, body: { all: true } });
    expect(all.body.pending_urls.sort()).toEqual([first.url, second.url].sort());
    await first.waitFor(2);
    await second.waitFor(1);
    const done = await eventStatus(sys, a.testKey, event.id, 'completed');
    expect(done.completed_urls.sort()).toEqual([first.url, second.url].sort());
    const bad = await call(sys, 'POST', `/events/${event.id}/replay`, { key: a.testKey, body: { all: 'yes' } });
    expect(bad.status).toBe(422);
    await Promise.all([first.close(), second.close()]);
  });

  it('a replay and a later attempt of the same event recording at that moment both commit (no deadlock)', async () => {
    const a = await createAccount(sys);
    const receiver = await startReceiver();
    await webhook(sys, a.testKey, receiver.url);
    const event = await publish(sys, a.user.id, 'test');
    await eventStatus(sys, a.testKey, event.id, 'completed');
    let replaying: ReturnType<typeof call<any>> | undefined;
    // What recording a later attempt does in its one statement (event-deliveries.ts): it
    // updates the delivery row, then its Payload's foreign key checks the event's key.
    await sys.db.transaction().execute(async (trx) => {
      await trx.updateTable('event_deliveries').set({ attempts: 7 }).where('event_id', '=', event.id).execute();
      const { pid } = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!;
      replaying = call(sys, 'POST', `/events/${event.id}/replay`, { key: a.testKey, body: { all: true } });
      // The replay holds the event's lock and waits for the delivery row held here.
      await eventually(async () => {
        const waiting = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where ${pid}::int = any(pg_blocking_pids(pid))`.execute(sys.db);
        return waiting.rows[0]!.n > 0 ? true : undefined;
      }, 10_000, 'the replay to wait for the delivery row');
      await trx
        .insertInto('payloads')
        .values({ id: newId('payload'), event_id: event.id, webhook_id: 'hook_x', request_url: receiver.url, request_headers: '{}', request_body: '{}', response_code: 500, response_headers: '{}', response_body: '', total_time: 1 })
        .execute();
      // Committed at the end of this callback; the replay goes on after it.
    });
    const res = await replaying!;
    expect(res.status).toBe(200);
    expect(res.body.pending_urls).toEqual([receiver.url]);
    // Both writes are in: the Payload recorded beside the replay, and the replay's reset, then its delivery.
    await receiver.waitFor(2);
    const done = await eventStatus(sys, a.testKey, event.id, 'completed');
    expect(done.completed_urls).toEqual([receiver.url]);
    const stored = await sys.db.selectFrom('payloads').select('response_code').where('event_id', '=', event.id).execute();
    expect(stored.map((p) => p.response_code).sort()).toEqual([200, 200, 500]);
    await receiver.close();
  });

  it('operators replay by filter: POST /admin/v1/events/replay', async () => {
    const a = await createAccount(sys);
    const receiver = await startReceiver((_d, _i, res) => res.writeHead(410).end());
    const hook = await webhook(sys, a.testKey, receiver.url);
    const e1 = await publish(sys, a.user.id, 'test');
    await eventStatus(sys, a.testKey, e1.id, 'failed');
    await call(sys, 'PATCH', `/webhooks/${hook.id}`, { key: a.testKey, body: {} });
    receiver.answer((_d, _i, res) => res.writeHead(200).end());
    const none = await call(sys, 'POST', '/admin/v1/events/replay', { headers: ADMIN, body: {} });
    expect(none.status).toBe(422);
    const res = await call(sys, 'POST', '/admin/v1/events/replay', { headers: ADMIN, body: { status: 'failed', user_id: a.user.id, webhook_id: hook.id, since: new Date(Date.now() - 60_000).toISOString() } });
    // Answered at once with a handle; the dispatchers start the events.
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ object: 'Replay', matched: 1, capped: false });
    expect(res.body.id).toMatch(/^replay_/);
    await eventStatus(sys, a.testKey, e1.id, 'completed');
    const progress = await eventually(async () => {
      const p = await call(sys, 'GET', `/admin/v1/replays/${res.body.id}`, { headers: ADMIN });
      return p.body.status === 'done' ? p : undefined;
    }, 10_000, 'the replay to be done');
    expect(progress.body).toMatchObject({ id: res.body.id, matched: 1, started: 1, remaining: 0 });
    expect((await call(sys, 'GET', '/admin/v1/replays/replay_00000000000000000000000000000000', { headers: ADMIN })).status).toBe(404);
    await receiver.close();
  });
});

describe('shiphook events replay', () => {
  it('replays from the shell, waits until the dispatchers started everything, prints the replay', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const path = await import('node:path');
    const a = await createAccount(sys);
    const receiver = await startReceiver((_d, _i, res) => res.writeHead(410).end());
    const hook = await webhook(sys, a.testKey, receiver.url);
    const event = await publish(sys, a.user.id, 'test');
    await eventStatus(sys, a.testKey, event.id, 'failed');
    await untilDisabled(sys, a.testKey, hook.id);
    await call(sys, 'PATCH', `/webhooks/${hook.id}`, { key: a.testKey, body: {} });
    receiver.answer((_d, _i, res) => res.writeHead(200).end());
    const { stdout } = await promisify(execFile)(process.execPath, [path.resolve('bin/shiphook.mjs'), 'events', 'replay', '--status', 'failed', '--user-id', a.user.id], {
      env: { ...process.env, ...TEST_ENV, DATABASE_URL: sys.config.databaseUrl, TEMPORAL_ADDRESS: sys.config.temporalAddress },
      encoding: 'utf8',
    });
    expect(JSON.parse(stdout)).toMatchObject({ object: 'Replay', status: 'done', matched: 1, started: 1, remaining: 0 });
    await eventStatus(sys, a.testKey, event.id, 'completed');
    await receiver.close();
  });
});
