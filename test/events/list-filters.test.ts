import EasyPostClient from '@easypost/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventStatus } from '../../src/events/tables';
import { publish } from '../support/events';
import { type Account, call, createAccount, errorOf } from '../support/http';
import { startSystem, type TestSystem } from '../support/system';

// GET /v2/events?status=…&description=…&object_id=…&tracking_code=…: the filters, with pagination, through HTTP and the official node client.
let sys: TestSystem;
let acct: Account;
/** The account's events, oldest first, with the status each was given and the object each is about. */
const events: { id: string; status: EventStatus; description: string; object: string; code?: string }[] = [];

const TRK_A = 'trk_0192f3a4b5c67d8e9f0a1b2c3d4e5f6a';
const TRK_B = 'trk_0192f3a4b5c67d8e9f0a1b2c3d4e5f6b';
const BATCH = 'batch_0192f3a4b5c67d8e9f0a1b2c3d4e5f6c';
const CODE_A = 'EZ4000000004';
const PLAN: [EventStatus, string, string, string?][] = [
  ['failed', 'tracker.updated', TRK_A, CODE_A],
  ['completed', 'tracker.updated', TRK_A, CODE_A],
  ['failed', 'batch.created', BATCH],
  ['retrying', 'tracker.updated', TRK_B, 'EZ2000000002'],
  ['in_queue', 'batch.created', BATCH],
  ['failed', 'tracker.updated', TRK_A, CODE_A],
  ['completed', 'batch.created', 'batch_other'],
  ['failed', 'tracker.updated', TRK_A, CODE_A],
];

beforeAll(async () => {
  sys = await startSystem();
  acct = await createAccount(sys);
  // Without webhooks an event is completed at once and nothing else writes its row; each
  // is then given its planned status (the delivery engine's part is tested elsewhere).
  for (const [status, description, object, code] of PLAN) {
    const result = { object: description.startsWith('batch') ? 'Batch' : 'Tracker', id: object, ...(code ? { tracking_code: code } : {}) };
    const e = await publish(sys, acct.user.id, 'test', { description, result });
    expect(e.status).toBe('completed');
    await sys.db.updateTable('events').set({ status }).where('id', '=', e.id).execute();
    events.push({ id: e.id, status, description, object, code });
  }
  // Another account's and the other mode's failed events, about the same tracker, never show.
  const other = await createAccount(sys);
  for (const [userId, mode] of [[other.user.id, 'test'], [acct.user.id, 'production']] as const) {
    const e = await publish(sys, userId, mode, { result: { object: 'Tracker', id: TRK_A, tracking_code: CODE_A } });
    await sys.db.updateTable('events').set({ status: 'failed' }).where('id', '=', e.id).execute();
  }
});
afterAll(() => sys.close());

const newestFirst = (pick: (e: (typeof events)[number]) => boolean) => events.filter(pick).map((e) => e.id).reverse();
const ids = (res: { body: { events: { id: string }[] } }) => res.body.events.map((e) => e.id);

describe('GET /v2/events filters', () => {
  it('status: each of the four, newest first, nothing else', async () => {
    for (const status of ['in_queue', 'retrying', 'completed', 'failed'] as const) {
      const res = await call(sys, 'GET', `/events?status=${status}&page_size=100`, { key: acct.testKey });
      expect(res.status).toBe(200);
      expect(ids(res), status).toEqual(newestFirst((e) => e.status === status));
      expect(res.body.events.every((e: any) => e.status === status)).toBe(true);
    }
  });

  it('description alone, and combined with status', async () => {
    const batches = await call(sys, 'GET', '/events?description=batch.created', { key: acct.testKey });
    expect(ids(batches)).toEqual(newestFirst((e) => e.description === 'batch.created'));
    const both = await call(sys, 'GET', '/events?description=tracker.updated&status=failed', { key: acct.testKey });
    expect(ids(both)).toEqual(newestFirst((e) => e.description === 'tracker.updated' && e.status === 'failed'));
    expect(ids(both)).toHaveLength(3);
  });

  it('combined with page_size, before_id, after_id and the datetime bounds', async () => {
    const failed = newestFirst((e) => e.status === 'failed'); // 4
    const first = await call(sys, 'GET', '/events?status=failed&page_size=2', { key: acct.testKey });
    expect(ids(first)).toEqual(failed.slice(0, 2));
    expect(first.body.has_more).toBe(true);
    const second = await call(sys, 'GET', `/events?status=failed&page_size=2&before_id=${failed[1]}`, { key: acct.testKey });
    expect(ids(second)).toEqual(failed.slice(2, 4));
    expect(second.body.has_more).toBe(false);
    const newer = await call(sys, 'GET', `/events?status=failed&after_id=${failed[3]}&description=tracker.updated`, { key: acct.testKey });
    expect(ids(newer).sort()).toEqual(newestFirst((e) => e.status === 'failed' && e.description === 'tracker.updated' && e.id !== failed[3]).sort());
    const start = (await call(sys, 'GET', `/events/${failed[1]}`, { key: acct.testKey })).body.created_at;
    const since = await call(sys, 'GET', `/events?status=failed&start_datetime=${encodeURIComponent(start)}`, { key: acct.testKey });
    expect(ids(since)).toEqual(failed.slice(0, 2));
    // created_at is shown in milliseconds and stored finer: the next millisecond bounds it from above.
    const end = new Date(new Date(start).getTime() + 1).toISOString();
    const until = await call(sys, 'GET', `/events?status=failed&end_datetime=${encodeURIComponent(end)}`, { key: acct.testKey });
    expect(ids(until)).toEqual(failed.slice(1));
  });

  it('a bad value is a 422 naming the parameter as sent and what it takes, in the message too; an empty one counts as not given; unknown parameters are ignored', async () => {
    const bad = await call(sys, 'GET', '/events?status=lost', { key: acct.testKey });
    expect(bad.status).toBe(422);
    expect(errorOf(bad)).toEqual({
      code: 'PARAMETER.FORBIDDEN',
      message: 'Invalid query parameter: status must be one of in_queue, retrying, completed, failed.',
      errors: [{ field: 'status', message: 'must be one of in_queue, retrying, completed, failed' }],
    });
    const badType = await call(sys, 'GET', '/events?description=tracker.exploded&status=failed', { key: acct.testKey });
    expect(badType.status).toBe(422);
    expect(errorOf(badType).message).toMatch(/^Invalid query parameter: description must be one of batch\.created, .*, tracker\.updated\.$/);
    expect(errorOf(badType).errors).toEqual([{ field: 'description', message: expect.stringContaining('must be one of batch.created') }]);
    const both = await call(sys, 'GET', '/events?status=FAILED&page_size=0', { key: acct.testKey });
    expect(errorOf(both).errors.map((e: any) => e.field).sort()).toEqual(['page_size', 'status']);
    expect(errorOf(both).message).toBe('Invalid query parameter: page_size must be an integer from 1 to 100; status must be one of in_queue, retrying, completed, failed.');
    const pair = await call(sys, 'GET', `/events?status=failed&before_id=${events[1]!.id}&after_id=${events[0]!.id}`, { key: acct.testKey });
    expect(errorOf(pair).errors).toEqual([{ field: 'after_id', message: 'cannot be used with before_id' }]);
    const empty = await call(sys, 'GET', '/events?status=&description=&page_size=100', { key: acct.testKey });
    expect(ids(empty)).toEqual(newestFirst(() => true));
    const extra = await call(sys, 'GET', '/events?status=failed&colour=blue&page=2', { key: acct.testKey });
    expect(extra.status).toBe(200);
    expect(ids(extra)).toEqual(newestFirst((e) => e.status === 'failed'));
  });

  it('object_id and tracking_code (in any case): alone, together, with status and description', async () => {
    const aboutA = newestFirst((e) => e.object === TRK_A);
    const byObject = await call(sys, 'GET', `/events?object_id=${TRK_A}`, { key: acct.testKey });
    expect(byObject.status).toBe(200);
    expect(ids(byObject)).toEqual(aboutA);
    expect(ids(byObject)).toHaveLength(4);
    for (const code of [CODE_A, CODE_A.toLowerCase()]) {
      expect(ids(await call(sys, 'GET', `/events?tracking_code=${code}`, { key: acct.testKey })), code).toEqual(aboutA);
    }
    expect(ids(await call(sys, 'GET', `/events?object_id=${TRK_A}&tracking_code=${CODE_A}`, { key: acct.testKey }))).toEqual(aboutA);
    expect(ids(await call(sys, 'GET', `/events?object_id=${TRK_B}&tracking_code=${CODE_A}`, { key: acct.testKey }))).toEqual([]);
    const failed = await call(sys, 'GET', `/events?object_id=${TRK_A}&status=failed`, { key: acct.testKey });
    expect(ids(failed)).toEqual(newestFirst((e) => e.object === TRK_A && e.status === 'failed'));
    expect(ids(failed)).toHaveLength(3);
    const batches = await call(sys, 'GET', `/events?object_id=${BATCH}&description=batch.created&status=in_queue`, { key: acct.testKey });
    expect(ids(batches)).toEqual(newestFirst((e) => e.object === BATCH && e.status === 'in_queue'));
    expect(ids(batches)).toHaveLength(1);
    const byCode = await call(sys, 'GET', `/events?tracking_code=${CODE_A}&status=completed&description=tracker.updated`, { key: acct.testKey });
    expect(ids(byCode)).toEqual(newestFirst((e) => e.code === CODE_A && e.status === 'completed'));
    expect(ids(byCode)).toHaveLength(1);
    // Nothing about it, or a batch has no tracking code: an empty page, not an error.
    expect(await call(sys, 'GET', '/events?object_id=trk_nothing', { key: acct.testKey })).toMatchObject({ status: 200, body: { events: [], has_more: false } });
    expect(ids(await call(sys, 'GET', `/events?tracking_code=${BATCH}`, { key: acct.testKey }))).toEqual([]);
  });

  it('object_id and tracking_code page with page_size, before_id, after_id and the datetime bounds', async () => {
    const aboutA = newestFirst((e) => e.object === TRK_A); // 4
    const first = await call(sys, 'GET', `/events?object_id=${TRK_A}&page_size=3`, { key: acct.testKey });
    expect(ids(first)).toEqual(aboutA.slice(0, 3));
    expect(first.body.has_more).toBe(true);
    const second = await call(sys, 'GET', `/events?object_id=${TRK_A}&page_size=3&before_id=${aboutA[2]}`, { key: acct.testKey });
    expect(ids(second)).toEqual(aboutA.slice(3));
    expect(second.body.has_more).toBe(false);
    const newer = await call(sys, 'GET', `/events?tracking_code=${CODE_A}&status=failed&after_id=${aboutA[3]}`, { key: acct.testKey });
    expect(ids(newer).sort()).toEqual(newestFirst((e) => e.code === CODE_A && e.status === 'failed' && e.id !== aboutA[3]).sort());
    const start = (await call(sys, 'GET', `/events/${aboutA[1]}`, { key: acct.testKey })).body.created_at;
    const since = await call(sys, 'GET', `/events?tracking_code=${CODE_A}&start_datetime=${encodeURIComponent(start)}`, { key: acct.testKey });
    expect(ids(since)).toEqual(aboutA.slice(0, 2));
  });

  it('an object_id or tracking_code outside 1 to 64 letters, digits, underscores or hyphens is a 422 naming the parameter; empty counts as not given', async () => {
    const rule = 'must be 1 to 64 letters, digits, underscores or hyphens';
    const spaced = await call(sys, 'GET', `/events?object_id=${encodeURIComponent(`${TRK_A} `)}`, { key: acct.testKey });
    expect(spaced.status).toBe(422);
    expect(errorOf(spaced)).toEqual({ code: 'PARAMETER.FORBIDDEN', message: `Invalid query parameter: object_id ${rule}.`, errors: [{ field: 'object_id', message: rule }] });
    const long = await call(sys, 'GET', `/events?tracking_code=${'9'.repeat(65)}&status=failed`, { key: acct.testKey });
    expect(errorOf(long).errors).toEqual([{ field: 'tracking_code', message: rule }]);
    const both = await call(sys, 'GET', `/events?object_id=${encodeURIComponent("trk_1' or '1'='1")}&tracking_code=${encodeURIComponent('EZ/1')}`, { key: acct.testKey });
    expect(errorOf(both).errors.map((e: any) => e.field).sort()).toEqual(['object_id', 'tracking_code']);
    const longest = await call(sys, 'GET', `/events?tracking_code=${'9'.repeat(64)}`, { key: acct.testKey });
    expect(longest.status).toBe(200);
    const empty = await call(sys, 'GET', '/events?object_id=&tracking_code=&page_size=100', { key: acct.testKey });
    expect(ids(empty)).toEqual(newestFirst(() => true));
  });

  it('is documented in the OpenAPI document', async () => {
    const doc = await call(sys, 'GET', '/openapi.json');
    const params = doc.body.paths['/v2/events'].get.parameters;
    expect(params.map((p: any) => p.name)).toEqual(
      expect.arrayContaining(['status', 'description', 'object_id', 'tracking_code', 'page_size', 'before_id', 'after_id', 'start_datetime', 'end_datetime']),
    );
    const objectId = params.find((p: any) => p.name === 'object_id');
    expect(JSON.stringify(objectId.schema)).toContain('^[A-Za-z0-9_-]{1,64}$');
    expect(objectId.description).toContain('result.id');
  });
});

describe('@easypost/api Event.all with filters', () => {
  it('passes status and description through and pages the filtered list', async () => {
    // Typed without these filters (the real API's list has none), sent all the same.
    const client: any = new EasyPostClient(acct.testKey, { baseUrl: `${sys.baseUrl}/` });
    const failed = await client.Event.all({ status: 'failed', page_size: 100 });
    expect(failed.events.map((e: any) => e.id)).toEqual(newestFirst((e) => e.status === 'failed'));
    const page = await client.Event.all({ status: 'failed', description: 'tracker.updated', page_size: 2 });
    expect(page.events.map((e: any) => e.id)).toEqual(newestFirst((e) => e.status === 'failed' && e.description === 'tracker.updated').slice(0, 2));
    expect(page.has_more).toBe(true);
    await expect(client.Event.all({ status: 'lost' })).rejects.toMatchObject({ statusCode: 422 });
  });
});
