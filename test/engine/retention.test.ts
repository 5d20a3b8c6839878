import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { retentionScheduleId } from '../../src/engine/contract';
import { ensureRetentionSchedule, runRetentionNow } from '../../src/engine/retention-schedule';
import { createPayloadPartitions, partitionName, payloadPartitions } from '../../src/events/payload-partitions';
import { payloadRows } from '../../src/events/payloads';
import type { EventStatus } from '../../src/events/tables';
import { firstIdAt, type IdPrefix } from '../../src/ids';
import { call, createAccount, type Account } from '../support/http';
import { eventStatus, publish, webhook } from '../support/events';
import { type Receiver, startReceiver } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

// The suite's worker runs with the default retention (30 days): these events are dated
// two and three months back, so its runs, scheduled or triggered, are the ones removing them.
const DAY = 86_400_000;
let sys: TestSystem;
let acct: Account;
let hookId: string;
let receiver: Receiver;

beforeAll(async () => {
  sys = await startSystem();
  receiver = await startReceiver();
  acct = await createAccount(sys);
  hookId = (await webhook(sys, acct.testKey, receiver.url)).id;
});
afterAll(async () => {
  await receiver?.close();
  await sys?.close();
});

/** An id made at `time`, as the API would have made it then. */
const idAt = (prefix: IdPrefix, time: Date) => firstIdAt(prefix, time).slice(0, -20) + randomBytes(10).toString('hex');

/** An event as the engine leaves it, with one delivery row and one Payload (an attempt a minute later). */
async function oldEvent(createdAt: Date, status: EventStatus, delivery: 'pending' | 'completed') {
  const id = idAt('evt', createdAt);
  await sys.db
    .insertInto('events')
    .values({ id, user_id: acct.user.id, mode: 'test', description: 'tracker.updated', status, result: '{}', previous_attributes: '{}', created_at: createdAt, updated_at: createdAt, dispatched_at: createdAt })
    .execute();
  await sys.db.insertInto('event_deliveries').values({ event_id: id, webhook_id: hookId, url: receiver.url, state: delivery, attempts: 1 }).execute();
  const [row] = payloadRows([
    { id: idAt('payload', createdAt), attempt: 1, eventId: id, webhookId: hookId, requestUrl: receiver.url, requestHeaders: {}, requestBody: '{}', responseCode: delivery === 'completed' ? 200 : 500, responseHeaders: {}, responseBody: '', totalTime: 5 },
  ]);
  await sys.db.insertInto('payloads').values({ ...row!, created_at: new Date(createdAt.getTime() + 60_000) }).execute();
  return id;
}

const relation = async (name: string) =>
  (await sql<{ oid: number | null }>`select to_regclass(${name})::oid as oid`.execute(sys.db)).rows[0]!.oid;
const payloadsOf = async (eventId: string) => (await sys.db.selectFrom('payloads').select('id').where('event_id', '=', eventId).execute()).length;
const deliveriesOf = async (eventId: string) => (await sys.db.selectFrom('event_deliveries').select('webhook_id').where('event_id', '=', eventId).execute()).length;
const listedIds = async () => {
  const res = await call(sys, 'GET', '/events?page_size=100', { key: acct.testKey });
  expect(res.status).toBe(200);
  return res.body.events.map((e: { id: string }) => e.id);
};

describe('event retention', () => {
  it('removes old finished events with their deliveries, drops their Payload partition, keeps a retrying one and everything else', async () => {
    const today = Math.floor(Date.now() / DAY) * DAY;
    const removableDay = new Date(today - 60 * DAY);
    const keptDay = new Date(today - 61 * DAY);
    for (const day of [removableDay, keptDay]) await createPayloadPartitions(sys.db, day, DAY, 0);
    const removablePartition = partitionName(removableDay);
    const keptPartition = partitionName(keptDay);
    const removableOid = await relation(removablePartition);
    expect(removableOid).not.toBeNull();
    expect(await relation(keptPartition)).not.toBeNull();

    const removable = await oldEvent(new Date(removableDay.getTime() + 3_600_000), 'completed', 'completed');
    const failed = await oldEvent(new Date(removableDay.getTime() + 7_200_000), 'failed', 'completed');
    const retrying = await oldEvent(new Date(keptDay.getTime() + 3_600_000), 'retrying', 'pending');
    // A day with no partition: its Payload lands in DEFAULT, the safety net.
    const inDefault = await oldEvent(new Date(today - 90 * DAY), 'completed', 'completed');
    expect((await sql<{ n: number }>`select count(*)::int as n from payloads_default where event_id = ${inDefault}`.execute(sys.db)).rows[0]!.n).toBe(1);
    const recent = (await publish(sys, acct.user.id, 'test')).id as string;
    // Before any retention run: the worker made the partitions ahead as it started, so an attempt lands in one, not in DEFAULT.
    await eventStatus(sys, acct.testKey, recent, 'completed');
    const recentPart = await sql<{ part: string }>`select tableoid::regclass::text as part from payloads where event_id = ${recent}`.execute(sys.db);
    expect(recentPart.rows.map((r) => r.part)).toEqual([partitionName(new Date(Math.floor(Date.now() / DAY) * DAY))]);
    expect(await listedIds()).toEqual(expect.arrayContaining([removable, failed, retrying, inDefault, recent]));
    // More than one batch: the run calls the sweep again until it is done.
    const many = 2500;
    await sql`
      insert into events (id, user_id, mode, description, status, result, previous_attributes, created_at, updated_at, dispatched_at)
      select ${firstIdAt('evt', removableDay).slice(0, -20)} || lpad(to_hex(i), 20, '0'), ${acct.user.id}, 'test', 'tracker.updated', 'completed', '{}', '{}',
        ${removableDay}::timestamptz, ${removableDay}::timestamptz, ${removableDay}::timestamptz
      from generate_series(1, ${many}) i`.execute(sys.db);
    const oldEvents = () => sys.db.selectFrom('events').select('id').where('user_id', '=', acct.user.id).where('created_at', '<', new Date(today - 30 * DAY)).execute();
    expect((await oldEvents()).length).toBe(many + 4);

    // Idempotency keys past their expiry go with the same run; a live one stays.
    const key = (scope: string, expiresAt: Date) => ({ scope, key_digest: randomBytes(32), fingerprint: randomBytes(32), status: 201, answer: randomBytes(16), locked_at: new Date(), expires_at: expiresAt });
    const liveKeyScope = `${acct.user.id}/live`;
    await sys.db.insertInto('idempotency_keys').values([key(`${acct.user.id}/expired`, new Date(Date.now() - DAY)), key(liveKeyScope, new Date(Date.now() + DAY))]).execute();
    const keysOf = async (scope: string) => (await sys.db.selectFrom('idempotency_keys').select('scope').where('scope', '=', scope).execute()).length;
    // So do replays older than the retention that no event carries, and portal sessions a day past their end.
    const replay = (id: string, createdAt: Date) => ({ id, filter: '{}', matched: 0, created_at: createdAt });
    await sys.db.insertInto('replays').values([replay(idAt('replay', removableDay), removableDay), replay(idAt('replay', new Date()), new Date())]).execute();
    const oldReplays = () => sys.db.selectFrom('replays').select('id').where('created_at', '<', new Date(today - 30 * DAY)).execute();
    const { id: keyId } = await sys.db.selectFrom('api_keys').select('id').where('user_id', '=', acct.user.id).executeTakeFirstOrThrow();
    const session = (id: string, expiresAt: Date) => ({ id, token_digest: randomBytes(32), user_id: acct.user.id, mode: 'test' as const, api_key_id: keyId, expires_at: expiresAt });
    const [endedLongAgo, endedLately] = [idAt('ps', new Date()), idAt('ps', new Date())];
    await sys.db.insertInto('portal_sessions').values([session(endedLongAgo, new Date(Date.now() - 2 * DAY)), session(endedLately, new Date(Date.now() - 3_600_000))]).execute();
    const sessions = async () => (await sys.db.selectFrom('portal_sessions').select('id').where('id', 'in', [endedLongAgo, endedLately]).execute()).map((r) => r.id);

    // The operator's command: triggers the schedule, waits for the run, prints what it did.
    const { stdout } = await promisify(execFile)(process.execPath, [path.resolve('bin/shiphook.mjs'), 'admin', 'retention', '--now'], {
      env: { ...process.env, TEMPORAL_ADDRESS: inject('temporalAddress'), SHIPHOOK_TASK_QUEUE: sys.config.taskQueue, LOG_LEVEL: 'warn' },
      encoding: 'utf8',
    });
    const counts = JSON.parse(stdout);
    expect(counts.events).toBeGreaterThanOrEqual(many + 3);
    expect((await oldEvents()).map((e) => e.id)).toEqual([retrying]);
    expect(counts['payload partitions dropped']).toBeGreaterThanOrEqual(1);
    expect(counts['idempotency keys']).toBeGreaterThanOrEqual(1);
    expect(await keysOf(`${acct.user.id}/expired`)).toBe(0);
    expect(await keysOf(liveKeyScope)).toBe(1);
    expect(counts.replays).toBeGreaterThanOrEqual(1);
    expect(await oldReplays()).toEqual([]);
    expect((await sys.db.selectFrom('replays').select('id').where('created_at', '>', new Date(Date.now() - DAY)).execute()).length).toBeGreaterThanOrEqual(1);
    expect(await sessions()).toEqual([endedLately]);

    for (const gone of [removable, failed, inDefault]) {
      expect((await call(sys, 'GET', `/events/${gone}`, { key: acct.testKey })).status).toBe(404);
      expect((await call(sys, 'GET', `/events/${gone}/payloads`, { key: acct.testKey })).status).toBe(404);
      expect(await deliveriesOf(gone)).toBe(0);
      expect(await payloadsOf(gone)).toBe(0);
    }
    // Dropped, not emptied: the partition's table is gone from the catalog.
    expect(await relation(removablePartition)).toBeNull();
    expect((await sql`select 1 from pg_class where oid = ${removableOid}`.execute(sys.db)).rows).toEqual([]);
    expect((await payloadPartitions(sys.db)).map((p) => p.name)).not.toContain(removablePartition);

    // The retrying event and its partition stay; so does everything else of the account.
    expect(await relation(keptPartition)).not.toBeNull();
    const kept = await call(sys, 'GET', `/events/${retrying}`, { key: acct.testKey });
    expect(kept.status).toBe(200);
    expect(kept.body.status).toBe('retrying');
    expect((await call(sys, 'GET', `/events/${retrying}/payloads`, { key: acct.testKey })).body.payloads).toHaveLength(1);
    expect((await call(sys, 'GET', `/events/${recent}`, { key: acct.testKey })).status).toBe(200);
    const listed = await listedIds();
    expect(listed).toEqual(expect.arrayContaining([retrying, recent]));
    for (const gone of [removable, failed, inDefault]) expect(listed).not.toContain(gone);
    expect((await call(sys, 'GET', `/webhooks/${hookId}`, { key: acct.testKey })).status).toBe(200);
    expect((await call(sys, 'GET', '/users', { key: acct.prodKey })).body.id).toBe(acct.user.id);

    // Once it has finished, the next run takes it, and its partition with it.
    await sys.db.updateTable('event_deliveries').set({ state: 'failed' }).where('event_id', '=', retrying).execute();
    await sys.db.updateTable('events').set({ status: 'failed' }).where('id', '=', retrying).execute();
    const temporal = await sys.temporal();
    const again = await runRetentionNow(temporal, sys.config);
    expect(again.events).toBeGreaterThanOrEqual(1);
    expect((await call(sys, 'GET', `/events/${retrying}`, { key: acct.testKey })).status).toBe(404);
    expect(await payloadsOf(retrying)).toBe(0);
    expect(await relation(keptPartition)).toBeNull();
  });

  it('keeps payload partitions a week ahead, so inserts never need DEFAULT', async () => {
    await runRetentionNow(await sys.temporal(), sys.config);
    const partitions = await payloadPartitions(sys.db);
    for (let day = 0; day <= 7; day++) {
      const at = new Date(Date.now() + day * DAY);
      expect(partitions.some((p) => p.from <= at && at < p.to), `a partition for ${at.toISOString()}`).toBe(true);
    }
  });
});

describe('the retention schedule', () => {
  it('runs every SHIPHOOK_RETENTION_EVERY, one run at a time; a worker restart follows the setting and keeps a pause', async () => {
    const temporal = await sys.temporal();
    const schedule = temporal.schedule.getHandle(retentionScheduleId(sys.config.taskQueue));
    const described = await schedule.describe();
    expect(described.spec.intervals?.map((i) => i.every)).toEqual([sys.config.retentionEveryMs]);
    expect(described.policies.overlap).toBe(ScheduleOverlapPolicy.SKIP);
    expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'retention', taskQueue: sys.config.taskQueue });

    await schedule.pause('an operator pauses it');
    try {
      await ensureRetentionSchedule(temporal, { ...sys.config, retentionEveryMs: 2 * 3_600_000 });
      const updated = await schedule.describe();
      expect(updated.spec.intervals?.map((i) => i.every)).toEqual([2 * 3_600_000]);
      expect(updated.state.paused).toBe(true);
    } finally {
      await ensureRetentionSchedule(temporal, sys.config);
      await schedule.unpause('the test is over');
    }
    expect((await schedule.describe()).spec.intervals?.map((i) => i.every)).toEqual([sys.config.retentionEveryMs]);
  });
});
