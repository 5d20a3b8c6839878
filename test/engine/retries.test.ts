import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthWorkflowId } from '../../src/engine/contract';
import { eventStatus, publish, webhook } from '../support/events';
import { call, createAccount } from '../support/http';
import { type Delivery, eventually, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

// Test timings (test/support/test-config.ts): retries after 300, 600, 900 ms (4 attempts),
// webhook disabled after 4 consecutive failures spanning ≥ 1 s.
let sys: TestSystem;
let client: Client;

beforeAll(async () => {
  sys = await startSystem();
  client = await sys.temporal();
});
afterAll(async () => {
  await sys.close();
});

/**
 * History event types of a workflow, with how often each occurs; with `settled`, once
 * it has closed, or (a failed event's) waits for a replay on its last timer: the database
 * says `failed` as soon as the last attempt is recorded, a moment before the server writes
 * that activity's events (a retried activity's start is recorded with its completion).
 */
async function historyCounts(workflowId: string, { settled = false } = {}) {
  const handle = client.workflow.getHandle(workflowId);
  const history = await eventually(async () => {
    const h = await handle.fetchHistory();
    const waitsForReplay = (h.events ?? []).some((e) => e.timerStartedEventAttributes && e.userMetadata?.summary);
    return !settled || waitsForReplay || (await handle.describe()).status.name !== 'RUNNING' ? h : undefined;
  }, 20_000, `the run of ${workflowId} to settle`);
  const counts: Record<string, number> = {};
  for (const e of history.events ?? []) {
    const type = Object.keys(e).find((k) => k.endsWith('EventAttributes'))!;
    counts[type] = (counts[type] ?? 0) + 1;
  }
  return { counts, events: history.events ?? [] };
}

describe('retries run by Temporal', () => {
  it('a Retry-After on a later attempt is honoured too', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver((_d, i, res) => {
      if (i === 0) res.writeHead(500).end();
      else if (i === 1) res.writeHead(503, { 'retry-after': '2' }).end();
      else res.writeHead(200).end('ok');
    });
    await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test');
    const [, second, third] = await receiver.waitFor(3, 15_000);
    // The planned wait before attempt 3 is 600 ms ± 20%; the receiver asked for 2 s.
    expect(third!.at - second!.at).toBeGreaterThanOrEqual(1900);
    await eventStatus(sys, acct.testKey, event.id, 'completed');
    await receiver.close();
  });

  it('a first retry further away than 15 s waits on a durable timer, not in its activity', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver((_d, i, res) => (i === 0 ? res.writeHead(503, { 'retry-after': '16' }).end() : res.writeHead(200).end('ok')));
    await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test');
    const [first, second] = await receiver.waitFor(2, 40_000);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(15_900);
    const { counts } = await historyCounts(event.id, { settled: true });
    expect(counts.timerStartedEventAttributes).toBe(1);
    expect(counts.timerFiredEventAttributes).toBe(1);
    expect(counts.markerRecordedEventAttributes).toBe(1); // the local activity's: no `patched` marker on this path
    await eventStatus(sys, acct.testKey, event.id, 'completed');
    await receiver.close();
  });

  it('a failing URL costs the same few history events however many attempts it takes', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver(status(500));
    await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test');
    await eventStatus(sys, acct.testKey, event.id, 'failed', 15_000);
    expect(receiver.deliveries).toHaveLength(4);
    const { counts, events } = await historyCounts(event.id, { settled: true });
    // Attempt 1 is a local activity, and so is attempt 2, in the same task, waiting its 300 ms
    // there (two markers); attempts 3–4 are one activity retried by the server, which waits
    // the 600 ms before attempt 3 itself. One upsert: the outcome, `failed`; one timer: the
    // failed run's wait for a replay.
    expect(counts.markerRecordedEventAttributes).toBe(2);
    expect(counts.upsertWorkflowSearchAttributesEventAttributes).toBe(1);
    expect(counts.timerStartedEventAttributes).toBe(1);
    expect(events.at(-1)!.timerStartedEventAttributes).toBeTruthy();
    expect(counts.activityTaskScheduledEventAttributes).toBe(1);
    const started = events.find((e) => e.activityTaskStartedEventAttributes)!.activityTaskStartedEventAttributes!;
    expect(started.attempt).toBe(2);
    // The failure the UI shows for the attempt before: what happened, without a stack of our code.
    expect(started.lastFailure).toMatchObject({ message: expect.stringMatching(/^attempt 3 of 4: HTTP 500 from http:\/\/127\.0\.0\.1:\d+/), stackTrace: '' });
    expect(started.lastFailure!.applicationFailureInfo).toMatchObject({ type: 'DeliveryAttemptFailed' });
    const payloads = (await call(sys, 'GET', `/events/${event.id}/payloads`, { key: acct.testKey })).body.payloads;
    expect(payloads.map((p: any) => p.response_code)).toEqual([500, 500, 500, 500]);
    const delivery = await sys.db.selectFrom('event_deliveries').select(['attempts', 'state']).where('event_id', '=', event.id).executeTakeFirstOrThrow();
    expect(delivery).toEqual({ attempts: 4, state: 'failed' });
    await receiver.close();
  });

  it('the health workflow hears when a run of failures starts, not about every failure', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver(status(500));
    const hook = await webhook(sys, acct.testKey, receiver.url);
    const events = [await publish(sys, acct.user.id, 'test'), await publish(sys, acct.user.id, 'test')];
    for (const e of events) await eventStatus(sys, acct.testKey, e.id, 'failed', 15_000);
    await eventually(async () => {
      const res = await call(sys, 'GET', `/webhooks/${hook.id}`, { key: acct.testKey });
      return res.body.disabled_at ?? undefined;
    }, 10_000, 'the webhook to be disabled');
    const failures = receiver.deliveries.length;
    const { counts } = await historyCounts(healthWorkflowId(hook.id));
    const signals = counts.workflowExecutionSignaledEventAttributes ?? 0;
    // Disabling takes 4 failures (more when attempts race the disable). The health workflow
    // hears of the first one, then once every 4 (the threshold): fewer signals than failures.
    expect(failures).toBeGreaterThanOrEqual(4);
    expect(signals).toBeGreaterThanOrEqual(1);
    expect(signals).toBeLessThanOrEqual(1 + Math.floor(failures / 4));
    await receiver.close();
  });

  it('an endpoint that flaps tells the health workflow about once a second, not at every flip', async () => {
    const acct = await createAccount(sys);
    // Each event's first attempt fails and its retry succeeds, and the next event comes after: each
    // failure starts a run of failures, and the next success ends it.
    const fails = (d: Delivery) => d.headers['x-shiphook-attempt'] === '1';
    const receiver = await startReceiver((d, _i, res) => void res.writeHead(fails(d) ? 500 : 200).end());
    const hook = await webhook(sys, acct.testKey, receiver.url);
    const started = Date.now();
    const events = [];
    for (let i = 0; i < 16; i++) {
      events.push(await publish(sys, acct.user.id, 'test'));
      await receiver.waitFor(2 * (i + 1));
    }
    for (const e of events) await eventStatus(sys, acct.testKey, e.id, 'completed', 15_000);
    const seconds = (Date.now() - started) / 1000;
    const flips = receiver.deliveries.filter((d, i) => i > 0 && fails(d) !== fails(receiver.deliveries[i - 1]!)).length;
    const { counts } = await eventually(async () => {
      const h = await historyCounts(healthWorkflowId(hook.id)).catch(() => undefined);
      return h?.counts.workflowExecutionSignaledEventAttributes ? h : undefined;
    }, 10_000, 'the health workflow to hear of the runs');
    const signals = counts.workflowExecutionSignaledEventAttributes!;
    // A signal at each flip (a run's start or end) would be as many signals as flips. Spaced, one worker sends one a second at most.
    expect(flips).toBeGreaterThanOrEqual(20);
    expect(signals).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
    expect((await call(sys, 'GET', `/webhooks/${hook.id}`, { key: acct.testKey })).body.disabled_at).toBeNull();
    await receiver.close();
  });
});
