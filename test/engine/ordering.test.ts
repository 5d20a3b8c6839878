import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimTurn, type OrderedDelivery, passTurn } from '../../src/engine/ordering';
import { newId } from '../../src/ids';
import { eventStatus, publish, webhook } from '../support/events';
import { call, createAccount } from '../support/http';
import { isolatedSystem } from '../support/isolated';
import { type Delivery, eventually, startReceiver } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';
import { currentDetails, portalSession, timerSummaries } from './pauses';

/**
 * `ordering: per_object`: the events about one object (`result.id`) reach the webhook in the
 * order they were published, the next once the previous was acknowledged or given up; other
 * objects' events go on. The turn's rules in the database, then the engine end to end.
 */
let sys: TestSystem;
let client: Client;

beforeAll(async () => {
  sys = await startSystem();
  client = await sys.temporal();
});
afterAll(() => sys.close());

const objectId = () => `trk_${randomBytes(16).toString('hex')}`;
const about = (id: string, status = 'in_transit') => ({ result: { id, object: 'Tracker', status } });
/** The ids of the events the receiver got, in arrival order, about those of `ids`. */
const arrivals = (deliveries: Delivery[], ids: string[]) => deliveries.map((d) => d.json?.id as string).filter((id) => ids.includes(id));

describe('the object’s turn (src/engine/ordering.ts)', () => {
  /** Events and their delivery rows written as publishing does, marked dispatched so no worker takes them: the turn's rules alone. */
  async function setup() {
    const acct = await createAccount(sys);
    const hook = await webhook(sys, acct.testKey, 'https://example.com/ordered', { ordering: 'per_object' });
    const object = objectId();
    const add = async (opts: { failedDispatch?: boolean } = {}) => {
      const id = newId('evt');
      await sys.db.insertInto('events').values({ id, user_id: acct.user.id, mode: 'test', description: 'tracker.updated', result: JSON.stringify(about(object).result), previous_attributes: '{}', dispatched_at: new Date(), ...(opts.failedDispatch ? { dispatch_failed_at: new Date() } : {}) }).execute();
      await sys.db.insertInto('event_deliveries').values({ event_id: id, webhook_id: hook.id, url: 'https://example.com/ordered' }).execute();
      return id;
    };
    const of = (eventId: string): OrderedDelivery => ({ eventId, webhookId: hook.id, objectId: object, userId: acct.user.id, mode: 'test' });
    const settle = (eventId: string, state: 'completed' | 'failed' | 'pending') => sys.db.updateTable('event_deliveries').set({ state }).where('event_id', '=', eventId).execute();
    const waitingFor = async (eventId: string) => (await sys.db.selectFrom('event_deliveries').select('waiting_for').where('event_id', '=', eventId).executeTakeFirstOrThrow()).waiting_for;
    return { add, of, settle, waitingFor };
  }

  it('goes to the earliest pending event, stays with it through its retries, and passes to the next when it settles', async () => {
    const { add, of, settle, waitingFor } = await setup();
    const [e1, e2, e3] = [await add(), await add(), await add()];
    expect(await claimTurn(sys.db, of(e2))).toEqual({ granted: false, behind: e1 });
    expect(await waitingFor(e2)).toBe(e1);
    expect(await claimTurn(sys.db, of(e1))).toEqual({ granted: true });
    expect(await claimTurn(sys.db, of(e1))).toEqual({ granted: true }); // its retry keeps it
    expect(await claimTurn(sys.db, of(e3))).toEqual({ granted: false, behind: e1 });
    await settle(e1, 'failed'); // given up: the next goes
    expect(await passTurn(sys.db, of(e1))).toBe(e2);
    expect(await passTurn(sys.db, of(e1))).toBe(e2); // asked again (a retried activity): the same answer
    expect(await claimTurn(sys.db, of(e3))).toEqual({ granted: false, behind: e2 });
    expect(await claimTurn(sys.db, of(e2))).toEqual({ granted: true });
    expect(await waitingFor(e2)).toBeNull();
    // A replayed earlier event takes its place by publication order: after the one with the turn, before later ones.
    await settle(e1, 'pending');
    expect(await claimTurn(sys.db, of(e1))).toEqual({ granted: false, behind: e2 });
    await settle(e2, 'completed');
    expect(await passTurn(sys.db, of(e2))).toBe(e1);
    expect(await claimTurn(sys.db, of(e3))).toEqual({ granted: false, behind: e1 });
    expect(await claimTurn(sys.db, of(e1))).toEqual({ granted: true });
  });

  it('is never shared: an event committed after a later one took the turn waits for it; a dispatch incident is skipped', async () => {
    const { add, of, settle } = await setup();
    const stuck = await add({ failedDispatch: true });
    const early = newId('evt'); // made first, committed last: a racing publish
    const late = await add();
    expect(await claimTurn(sys.db, of(late))).toEqual({ granted: true });
    await sys.db.insertInto('events').values({ id: early, user_id: (await sys.db.selectFrom('events').select('user_id').where('id', '=', late).executeTakeFirstOrThrow()).user_id, mode: 'test', description: 'tracker.updated', result: JSON.stringify(about(of(late).objectId).result), previous_attributes: '{}', dispatched_at: new Date() }).execute();
    await sys.db.insertInto('event_deliveries').values({ event_id: early, webhook_id: of(late).webhookId, url: 'https://example.com/ordered' }).execute();
    expect(await claimTurn(sys.db, of(early))).toEqual({ granted: false, behind: late });
    expect(await claimTurn(sys.db, of(late))).toEqual({ granted: true });
    await settle(late, 'completed');
    expect(await passTurn(sys.db, of(late))).toBe(early);
    expect(await claimTurn(sys.db, of(early))).toEqual({ granted: true });
    expect(stuck < early).toBe(true);
  });
});

describe('an ordered webhook', () => {
  it('gets each object’s events in publication order, the next after the previous was acknowledged; another object’s go on meanwhile', async () => {
    const acct = await createAccount(sys);
    const sent = new Map<string, number>();
    let first = '';
    // The first event about A fails twice (two retries), then is acknowledged.
    const receiver = await startReceiver((d, _i, res) => {
      const n = (sent.get(d.json.id) ?? 0) + 1;
      sent.set(d.json.id, n);
      res.writeHead(d.json.id === first && n <= 2 ? 500 : 200).end();
    });
    try {
      await webhook(sys, acct.testKey, receiver.url, { ordering: 'per_object' });
      const [a, b] = [objectId(), objectId()];
      const a1 = await publish(sys, acct.user.id, 'test', about(a, 'pre_transit'));
      first = a1.id;
      const a2 = await publish(sys, acct.user.id, 'test', about(a, 'in_transit'));
      const b1 = await publish(sys, acct.user.id, 'test', about(b, 'pre_transit'));
      const a3 = await publish(sys, acct.user.id, 'test', about(a, 'delivered'));
      const b2 = await publish(sys, acct.user.id, 'test', about(b, 'in_transit'));
      for (const e of [a1, a2, a3, b1, b2]) await eventStatus(sys, acct.testKey, e.id, 'completed');

      const ids = [a1, a2, a3, b1, b2].map((e) => e.id);
      expect(arrivals(receiver.deliveries, [a1.id, a2.id, a3.id])).toEqual([a1.id, a1.id, a1.id, a2.id, a3.id]);
      expect(arrivals(receiver.deliveries, [b1.id, b2.id])).toEqual([b1.id, b2.id]);
      // B did not wait for A's retries.
      const at = (id: string) => receiver.deliveries.find((d) => d.json.id === id)!.at;
      expect(at(b2.id)).toBeLessThan(at(a2.id));
      // Waiting used no attempt: each event's first request was its attempt 1.
      for (const id of ids) expect(receiver.deliveries.find((d) => d.json.id === id)!.headers['x-shiphook-attempt']).toBe('1');
      // A2 waited for A1, and its run said so.
      expect(await timerSummaries(client, a2.id)).toEqual([expect.stringContaining(`waits for ${a1.id} about ${a} to be delivered to ${receiver.url} first`)]);
      expect(await timerSummaries(client, b1.id)).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it('lets an object’s next event go when the one before it reached the end of the retry schedule; the wait shows in Temporal and the portal', { timeout: 180_000 }, async () => {
    // A worker of its own that never disables the failing webhook (the suite's disables after 4 failures in 1 s).
    const iso = await isolatedSystem({ env: { SHIPHOOK_DISABLE_AFTER_FAILURES: '1000' } });
    let refused = '';
    const receiver = await startReceiver((d, _i, res) => res.writeHead(d.json?.id === refused ? 500 : 200).end());
    try {
      const acct = await createAccount(iso.api);
      await webhook(iso.api, acct.testKey, receiver.url, { ordering: 'per_object' });
      await iso.worker();
      const isoClient = await iso.api.temporal();
      const a = objectId();
      const a1 = await publish(iso.api, acct.user.id, 'test', about(a));
      refused = a1.id;
      const a2 = await publish(iso.api, acct.user.id, 'test', about(a));
      const details = await eventually(async () => {
        const d = await currentDetails(isoClient, a2.id).catch(() => '');
        return d.includes('waits for') ? d : undefined;
      }, 30_000, 'the second event’s run to say what it waits for');
      expect(details).toContain(`waits for ${a1.id} about ${a} to be delivered to ${receiver.url} first (ordering per_object)`);
      const portal = await portalSession(iso.api, acct.testKey);
      expect(await portal.get(`/portal/events/${a2.id}`)).toContain(`waits for <a class="code" href="/portal/events/${a1.id}">${a1.id}</a>`);

      await eventStatus(iso.api, acct.testKey, a1.id, 'failed', 30_000);
      await eventStatus(iso.api, acct.testKey, a2.id, 'completed', 30_000);
      // A1's four attempts, then A2.
      expect(arrivals(receiver.deliveries, [a1.id, a2.id])).toEqual([a1.id, a1.id, a1.id, a1.id, a2.id]);
      expect((await call(iso.api, 'GET', `/events/${a2.id}/payloads`, { key: acct.testKey })).body.payloads).toHaveLength(1);
      expect(await portal.get(`/portal/events/${a2.id}`)).not.toContain('waits for');
    } finally {
      await receiver.close();
      await iso.close();
    }
  });
});
