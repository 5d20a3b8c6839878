import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStatusAttr } from '../../src/engine/contract';
import { eventStatus, publish, webhook } from '../support/events';
import { call, createAccount } from '../support/http';
import { eventually, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

/**
 * A webhook disabled while some of its events wait for their retries: those events
 * can no longer be delivered, so they are `failed` at once (not when each retry comes
 * due), nothing moves them back, and their runs stop at their next attempt without
 * sending it, then wait, failed, for a replay (workflows/deliver-event.ts).
 */
let sys: TestSystem;
let client: Client;

beforeAll(async () => {
  sys = await startSystem();
  client = await sys.temporal();
});
afterAll(() => sys.close());

/** The retry the endpoint asks for: far enough that "at once" cannot be the retry itself. */
const RETRY_AFTER_S = 20;

describe('a webhook disabled while its events wait for retries', () => {
  it('moves them to failed at once, so status=failed lists them; their runs then stop without sending and wait, failed', async () => {
    const acct = await createAccount(sys);
    // The first two events are asked to come back later; the third is told the endpoint is gone.
    const receiver = await startReceiver((d, i, res) => (i < 2 ? status(503, { 'retry-after': String(RETRY_AFTER_S) }) : status(410))(d, i, res));
    const hook = await webhook(sys, acct.testKey, receiver.url);
    const waiting = [await publish(sys, acct.user.id, 'test'), await publish(sys, acct.user.id, 'test')];
    await receiver.waitFor(2);
    for (const e of waiting) await eventStatus(sys, acct.testKey, e.id, 'retrying');
    const retryDue = receiver.deliveries[0]!.at + RETRY_AFTER_S * 1000 * 0.8;

    const gone = await publish(sys, acct.user.id, 'test');
    await receiver.waitFor(3);
    const failedIds = () => call(sys, 'GET', '/events?status=failed&page_size=10', { key: acct.testKey }).then((r) => (r.body.events as { id: string }[]).map((e) => e.id));
    const listed = await eventually(async () => {
      const ids = await failedIds();
      return ids.length === 3 ? ids : undefined;
    }, 10_000, 'status=failed to list the three events');
    // Before any of the waiting events' retries was due: the disable moved them.
    expect(Date.now()).toBeLessThan(retryDue);
    expect(listed.sort()).toEqual([...waiting, gone].map((e) => e.id).sort());
    expect((await call(sys, 'GET', `/webhooks/${hook.id}/health`, { key: acct.testKey })).body).toMatchObject({ status: 'disabled', disabled_reason: 'endpoint_gone' });
    const rows = await sys.db.selectFrom('event_deliveries').select(['state', 'attempts', 'next_attempt_at']).where('webhook_id', '=', hook.id).execute();
    expect(rows.map((r) => [r.state, r.attempts, r.next_attempt_at])).toEqual([['failed', 1, null], ['failed', 1, null], ['failed', 1, null]]);

    // Their runs' retries come due: they find the delivery given up, send nothing, and
    // the runs upsert `failed` and wait (Running) for a replay or recovery.
    for (const e of waiting) {
      const run = await eventually(async () => {
        const d = await client.workflow.getHandle(e.id).describe();
        return d.typedSearchAttributes.get(EventStatusAttr) === 'failed' ? d : undefined;
      }, 40_000, `the run of ${e.id} to reach its outcome`);
      expect(run.status.name).toBe('RUNNING');
      expect(run.raw.pendingActivities ?? []).toEqual([]);
      await eventStatus(sys, acct.testKey, e.id, 'failed');
    }
    expect(receiver.deliveries).toHaveLength(3);
    expect((await failedIds()).sort()).toEqual(listed.sort());
    await receiver.close();
  }, 90_000);
});
