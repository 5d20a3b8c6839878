import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/database';
import { OUTBOX_CHANNEL, publishEvents } from '../../src/events/publish';
import { webhook } from '../support/events';
import { call, createAccount, errorOf } from '../support/http';
import { eventually, startReceiver } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';
import { TEST_ENV } from '../support/test-config';

let sys: TestSystem;
const ADMIN = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };

beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

const event = (userId: string, n: number, extra: Record<string, unknown> = {}) => ({
  user_id: userId,
  mode: 'test',
  description: 'tracker.updated',
  result: { object: 'Tracker', id: `trk_${n}`, status: 'in_transit' },
  ...extra,
});
const batch = (events: unknown[], headers: Record<string, string> = {}) => call(sys, 'POST', '/admin/v1/events/batch', { headers: { ...ADMIN, ...headers }, body: { events } });
const eventsOf = async (userId: string) => (await sys.db.selectFrom('events').select(['id', 'status', 'result']).where('user_id', '=', userId).orderBy('id').execute());

describe('POST /admin/v1/events/batch', () => {
  it('commits a batch of 500 in one answer, their ids in order, and delivers every one to a real receiver', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver();
    await webhook(sys, acct.testKey, receiver.url);
    const events = Array.from({ length: 500 }, (_, n) => event(acct.user.id, n));
    const res = await batch(events);
    expect(res.status).toBe(201);
    expect(res.body.events).toHaveLength(500);
    const stored = await eventsOf(acct.user.id);
    expect(stored).toHaveLength(500);
    // In the order sent: the n-th id is the event about trk_n.
    const byId = new Map(stored.map((e) => [e.id, e]));
    res.body.events.forEach(({ id }: { id: string }, n: number) => expect(byId.get(id)?.result).toMatchObject({ id: `trk_${n}` }));

    const deliveries = await receiver.waitFor(500, 120_000);
    expect(new Set(deliveries.map((d) => d.json.id))).toEqual(new Set(res.body.events.map((e: { id: string }) => e.id)));
    await eventually(async () => ((await eventsOf(acct.user.id)).every((e) => e.status === 'completed') ? true : undefined), 60_000, 'every event of the batch completed');
  }, 180_000);

  it('wakes the outbox once for a whole batch: one NOTIFY from its transaction', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver();
    await webhook(sys, acct.testKey, receiver.url);
    // One connection, so every statement below runs in the session whose notifications are counted.
    const db = createDb(sys.config.databaseUrl!, 1);
    const listener = new pg.Client({ connectionString: sys.config.databaseUrl });
    try {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
      const pid = rows[0]!.pid;
      const heard: string[] = [];
      await listener.connect();
      listener.on('notification', (n) => { if (n.processId === pid) heard.push(n.payload ?? ''); });
      await listener.query(`listen ${OUTBOX_CHANNEL}`);
      const published = await publishEvents(db, Array.from({ length: 50 }, (_, n) => ({ userId: acct.user.id, mode: 'test' as const, description: 'tracker.updated', result: { object: 'Tracker', id: `trk_${n}` } })));
      expect(published).toHaveLength(50);
      // A session's notifications arrive in commit order: once the marker is heard, so is everything before it.
      await sql`select pg_notify(${OUTBOX_CHANNEL}, 'marker')`.execute(db);
      await eventually(async () => (heard.includes('marker') ? true : undefined), 10_000, 'the marker notification');
      expect(heard).toEqual(['', 'marker']);
    } finally {
      await listener.end();
      await db.destroy();
    }
    await receiver.waitFor(50, 60_000);
  }, 90_000);

  it('refuses a batch of 501 whole, writing nothing', async () => {
    const acct = await createAccount(sys);
    const res = await batch(Array.from({ length: 501 }, (_, n) => event(acct.user.id, n)));
    expect(res.status).toBe(422);
    expect(errorOf(res).code).toBe('PARAMETER.FORBIDDEN');
    expect(errorOf(res).errors).toEqual([{ field: 'events', message: 'must hold at most 500 events' }]);
    expect(await eventsOf(acct.user.id)).toEqual([]);
    const empty = await batch([]);
    expect(empty.status).toBe(422);
    expect(errorOf(empty).errors).toEqual([{ field: 'events', message: 'must hold at least one event' }]);
  });

  it('refuses a batch with bad events whole, naming each by its index, writing nothing', async () => {
    const acct = await createAccount(sys);
    const events = Array.from({ length: 10 }, (_, n) => event(acct.user.id, n));
    events[3] = event(acct.user.id, 3, { description: 'tracker.exploded' });
    events[7] = event(acct.user.id, 7, { result: 'not an object' });
    const res = await batch(events);
    expect(res.status).toBe(422);
    expect(errorOf(res).code).toBe('PARAMETER.FORBIDDEN');
    expect(errorOf(res).errors.map((e: { field: string }) => e.field)).toEqual(['events[3].description', 'events[7].result']);
    expect(await eventsOf(acct.user.id)).toEqual([]);
  });

  it('refuses a batch naming an unknown user whole, by index, writing nothing', async () => {
    const acct = await createAccount(sys);
    const events = [event(acct.user.id, 0), event('user_00000000000000000000000000000000', 1), event(acct.user.id, 2)];
    const res = await batch(events);
    expect(res.status).toBe(422);
    expect(errorOf(res).errors).toEqual([{ field: 'events[1].user_id', message: 'no such user' }]);
    expect(await eventsOf(acct.user.id)).toEqual([]);
  });

  it('publishes an event with an idempotency_key once: a later batch and a repeat within the batch answer its first id', async () => {
    const acct = await createAccount(sys);
    const [k1, k2, k3] = [randomUUID(), randomUUID(), randomUUID()];
    const first = await batch([event(acct.user.id, 1, { idempotency_key: k1 }), event(acct.user.id, 2, { idempotency_key: k2 }), event(acct.user.id, 0)]);
    expect(first.status).toBe(201);
    const second = await batch([event(acct.user.id, 2, { idempotency_key: k2 }), event(acct.user.id, 3, { idempotency_key: k3 }), event(acct.user.id, 3, { idempotency_key: k3 })]);
    expect(second.status).toBe(201);
    const [id1, id2, id0] = first.body.events.map((e: { id: string }) => e.id);
    const [again2, id3, again3] = second.body.events.map((e: { id: string }) => e.id);
    expect(again2).toBe(id2);
    expect(again3).toBe(id3);
    expect((await eventsOf(acct.user.id)).map((e) => e.id).sort()).toEqual([id0, id1, id2, id3].sort());
  });

  it('refuses a batch whose idempotency_key names a different event, whole, writing nothing of it', async () => {
    const acct = await createAccount(sys);
    const key = randomUUID();
    const first = await batch([event(acct.user.id, 1, { idempotency_key: key })]);
    const res = await batch([event(acct.user.id, 5), event(acct.user.id, 2, { idempotency_key: key })]);
    expect(res.status).toBe(422);
    expect(errorOf(res).code).toBe('IDEMPOTENCY_KEY.REUSED');
    expect(errorOf(res).errors).toEqual([{ field: 'events[1].idempotency_key', message: expect.any(String) }]);
    const within = await batch([event(acct.user.id, 6, { idempotency_key: 'same' }), event(acct.user.id, 7, { idempotency_key: 'same' })]);
    expect(within.status).toBe(422);
    expect(errorOf(within).errors).toEqual([{ field: 'events[1].idempotency_key', message: expect.any(String) }]);
    expect((await eventsOf(acct.user.id)).map((e) => e.id)).toEqual([first.body.events[0].id]);
    // The refused batch claimed no key: 'same' is free.
    expect((await batch([event(acct.user.id, 6, { idempotency_key: 'same' })])).status).toBe(201);
  });

  it('answers a retried batch request (Idempotency-Key header) with its first answer', async () => {
    const acct = await createAccount(sys);
    const key = randomUUID();
    const events = [event(acct.user.id, 1), event(acct.user.id, 2)];
    const [a, b] = await Promise.all([batch(events, { 'idempotency-key': key }), batch(events, { 'idempotency-key': key })]);
    expect(a.body).toEqual(b.body);
    expect(await eventsOf(acct.user.id)).toHaveLength(2);
  });
});
