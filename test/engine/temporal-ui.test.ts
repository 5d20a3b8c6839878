import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStatusAttr, EventTypeAttr, healthWorkflowId, ModeAttr, ObjectIdAttr, UserIdAttr, WebhookUrlsAttr } from '../../src/engine/contract';
import { sandboxPatchApplied, workflowSandboxOptions } from '../../src/engine/sandbox';
import { untilDisabled, eventStatus, publish, webhook } from '../support/events';
import { call, createAccount } from '../support/http';
import { eventually, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;
let client: Client;

beforeAll(async () => {
  sys = await startSystem();
  client = await sys.temporal();
});
afterAll(async () => {
  await sys.close();
});

describe('operators in the Temporal UI', () => {
  it('find an event’s workflow by its id and filter by type, user, mode and status', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver();
    const secretUrl = receiver.url.replace('http://', 'http://bob:topsecret@');
    await webhook(sys, acct.testKey, secretUrl);
    const event = await publish(sys, acct.user.id, 'test', { description: 'tracker.created' });
    await eventStatus(sys, acct.testKey, event.id, 'completed');

    const handle = client.workflow.getHandle(event.id);
    expect(await handle.result()).toBe('completed');
    const described = await handle.describe();
    expect(described.type).toBe('deliverEvent');
    const attrs = described.typedSearchAttributes;
    expect(attrs.get(EventTypeAttr)).toBe('tracker.created');
    expect(attrs.get(UserIdAttr)).toBe(acct.user.id);
    expect(attrs.get(ModeAttr)).toBe('test');
    // Delivered by the first attempt: no status attribute, the run's close says it.
    expect(attrs.get(EventStatusAttr)).toBeUndefined();
    expect(described.status.name).toBe('COMPLETED');
    expect((await upserts(event.id)).filter((u) => u !== null)).toEqual([]);
    expect(attrs.get(WebhookUrlsAttr)).toEqual([secretUrl.replace('bob:topsecret@', '***@')]);

    const query = `ShiphookEventType = "tracker.created" AND ShiphookUserId = "${acct.user.id}" AND ShiphookMode = "test" AND ExecutionStatus = "Completed" AND ShiphookEventStatus IS NULL`;
    expect(await workflowsFound(query)).toEqual([event.id]);

    // Each attempt's target (masked) is in the history, never the password.
    // Payloads are base64 in the history: decoded, or the assertion below could never fail.
    const history = JSON.stringify(await handle.fetchHistory(), (k, v) => (k === 'data' && typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : v));
    expect(history).toContain('***@');
    expect(history).not.toContain('topsecret');
    await receiver.close();
  });

  it('find every run about one object by ShiphookObjectId (its result.id), set at start and again by a replay; none for an event without one', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver();
    await webhook(sys, acct.testKey, receiver.url);
    const tracker = `trk_${randomBytes(16).toString('hex')}`;
    const about = (id: unknown) => ({ result: { object: 'Tracker', id, tracking_code: 'EZ4000000004', status: 'in_transit' } });
    const created = await publish(sys, acct.user.id, 'test', { description: 'tracker.created', ...about(tracker) });
    const updated = await publish(sys, acct.user.id, 'test', about(tracker));
    const other = await publish(sys, acct.user.id, 'test', about(`trk_${randomBytes(16).toString('hex')}`));
    const noId = await publish(sys, acct.user.id, 'test', { description: 'batch.created', result: { object: 'Batch', state: 'created' } });
    // An id no one could search by (GET /v2/events refuses it as object_id): no attribute, and delivered all the same.
    const oddId = await publish(sys, acct.user.id, 'test', about(`trk ${'x'.repeat(80)}`));
    for (const e of [created, updated, other, noId, oddId]) await eventStatus(sys, acct.testKey, e.id, 'completed');
    expect((await call(sys, 'POST', `/events/${created.id}/replay`, { key: acct.testKey })).status).toBe(200);

    const attr = async (id: string) => (await client.workflow.getHandle(id).describe()).typedSearchAttributes.get(ObjectIdAttr);
    expect(await attr(updated.id)).toBe(tracker);
    expect(await attr(noId.id)).toBeUndefined();
    expect(await attr(oddId.id)).toBeUndefined();
    // The first run of `created`, its replay's run, and `updated`'s: what README's query lists.
    const runs = await eventually(async () => {
      const found: string[] = [];
      for await (const wf of client.workflow.list({ query: `ShiphookObjectId='${tracker}'` })) found.push(wf.workflowId);
      return found.length === 3 ? found.sort() : undefined;
    }, 15_000, 'three runs about the tracker in visibility');
    expect(runs).toEqual([created.id, created.id, updated.id].sort());
    await receiver.close();
  });

  it('see an event that did not succeed at once: Running while it retries, then its outcome', async () => {
    const acct = await createAccount(sys);
    // The first attempt is refused for 12 s (Retry-After; the retry waits in its activity),
    // the second succeeds: 12 s to look at a run that retries, whatever the machine's load.
    const receiver = await startReceiver((d, i, res) => (i === 0 ? status(503, { 'retry-after': '12' }) : status(200))(d, i, res));
    const hook = await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test', { description: 'tracker.updated' });
    await receiver.waitFor(1);
    await eventStatus(sys, acct.testKey, event.id, 'retrying');
    // Retrying: the run is open, and nothing was upserted (no history event for it).
    const running = await client.workflow.getHandle(event.id).describe();
    expect(running.status.name).toBe('RUNNING');
    expect(running.typedSearchAttributes.get(EventStatusAttr)).toBeUndefined();
    // Nor anything else (a `patched()` call would upsert TemporalChangeVersion).
    expect(await upserts(event.id)).toEqual([]);
    expect(await workflowsFound(`ShiphookUserId = "${acct.user.id}" AND ExecutionStatus = "Running"`)).toEqual([event.id]);
    expect(receiver.deliveries).toHaveLength(1); // all of the above seen before the retry
    await eventStatus(sys, acct.testKey, event.id, 'completed', 30_000);
    await expectClosedWith(event.id, 'completed', ['completed']);
    expect(await workflowsFound(`ShiphookUserId = "${acct.user.id}" AND ShiphookEventStatus = "completed"`)).toEqual([event.id]);

    // Every attempt fails: the run upserts `failed` and stays open on a timer until the
    // event's retention, listed by ExecutionStatus = "Running" as failing now.
    receiver.answer(status(500));
    const failed = await publish(sys, acct.user.id, 'test', { description: 'tracker.updated' });
    await eventStatus(sys, acct.testKey, failed.id, 'failed');
    const dormant = await failedAndWaiting(failed.id);
    expect(await upserts(failed.id)).toEqual(['failed']);
    const retention = sys.config.eventRetentionMs;
    expect(Math.abs(Date.parse(dormant.timer.expirationTime) - (Date.parse(failed.created_at) + retention))).toBeLessThan(5_000);
    expect(await workflowsFound(`ShiphookUserId = "${acct.user.id}" AND ExecutionStatus = "Running" AND ShiphookEventStatus = "failed"`)).toEqual([failed.id]);

    // A replay replaces it: the old run is Terminated with the replay named, the new one tells the outcome.
    // (The suite's health policy disables the webhook: re-enabled first.)
    receiver.answer(status(200));
    await untilDisabled(sys, acct.testKey, hook.id);
    expect((await call(sys, 'PATCH', `/webhooks/${hook.id}`, { key: acct.testKey, body: {} })).status).toBe(201);
    expect((await call(sys, 'POST', `/events/${failed.id}/replay`, { key: acct.testKey })).status).toBe(200);
    await eventStatus(sys, acct.testKey, failed.id, 'completed');
    const old = await client.workflow.getHandle(failed.id, dormant.runId).describe();
    expect(old.status.name).toBe('TERMINATED');
    expect(await terminationReason(failed.id, dormant.runId)).toBe(`replayed by POST /v2/events/${failed.id}/replay`);
    expect(await client.workflow.getHandle(failed.id).result()).toBe('completed');
    expect(await workflowsFound(`ShiphookUserId = "${acct.user.id}" AND ExecutionStatus = "Terminated"`)).toEqual([failed.id]);
    await eventually(async () => {
      for await (const _ of client.workflow.list({ query: `ShiphookUserId = "${acct.user.id}" AND ExecutionStatus = "Running"` })) return undefined;
      return true;
    }, 15_000, 'nothing of the account failing now');
    await receiver.close();
  });
});

describe('a retrying delivery in the Temporal UI', () => {
  it('shows attempt n of the schedule’s total: the retry activity is limited to the attempts left, its summary and failure name the delivery’s numbers', async () => {
    const acct = await createAccount(sys);
    // Attempts 1 and 2 (local activities in the first task) fail; attempt 3 (the retry activity's first) asks for 12 s: time to look.
    const receiver = await startReceiver((d, i, res) => (i <= 1 ? status(500) : i === 2 ? status(503, { 'retry-after': '12' }) : status(200))(d, i, res));
    await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test');
    const handle = client.workflow.getHandle(event.id);
    const pending = await eventually(async () => {
      // Not found until the dispatcher has started it.
      const activity = (await handle.describe().catch(() => undefined))?.raw.pendingActivities?.[0];
      return activity?.attempt === 2 ? activity : undefined;
    }, 20_000, 'the retry activity waiting for its second attempt');
    // The suite's schedule: 3 delays, 4 attempts; the activity holds attempts 3–4.
    expect(pending.maximumAttempts).toBe(2);
    expect(pending.lastFailure?.message).toMatch(/^attempt 3 of 4: HTTP 503 from /);
    expect(await retrySummaries(event.id)).toEqual([{ summary: expect.stringMatching(/^attempts 3–4 of 4: POST http/), maximumAttempts: 2 }]);
    await eventStatus(sys, acct.testKey, event.id, 'completed', 30_000);
    expect(receiver.deliveries).toHaveLength(4);
    await receiver.close();
  });

  it('when attempts that sent nothing used up the activity’s, the workflow schedules it once more, without a limit, and the schedule still ends at its last attempt', async () => {
    const acct = await createAccount(sys);
    // Retry-After 8 s: longer than a first retry made in the task, so attempts 2–4 are the activity's.
    const receiver = await startReceiver((d, i, res) => (i === 0 ? status(503, { 'retry-after': '8' }) : status(500))(d, i, res));
    const hook = await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test');
    await eventStatus(sys, acct.testKey, event.id, 'retrying');
    // As if attempt 1 had not been recorded (what an infrastructure error does to a Temporal
    // attempt): the activity's 3 attempts are delivery attempts 1–3, and the 4th is left.
    await sys.db.updateTable('event_deliveries').set({ attempts: 0 }).where('event_id', '=', event.id).where('webhook_id', '=', hook.id).execute();
    // And the webhook's run of failures with it, or its health (the suite's 4 failures over 1 s)
    // would disable it before the last attempt.
    await sys.db.updateTable('webhooks').set({ consecutive_failures: 0, failing_since: null }).where('id', '=', hook.id).execute();
    await eventStatus(sys, acct.testKey, event.id, 'failed', 30_000);
    expect(receiver.deliveries).toHaveLength(5);
    expect(await retrySummaries(event.id)).toEqual([
      { summary: expect.stringMatching(/^attempts 2–4 of 4: /), maximumAttempts: 3 },
      { summary: expect.stringMatching(/^attempts after infrastructure errors, up to 4: /), maximumAttempts: 0 },
    ]);
    await receiver.close();
  });
});

/** Each retryDelivery the run scheduled: its summary (what the UI shows) and attempt limit (0: none). */
async function retrySummaries(workflowId: string) {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const attrs = e.activityTaskScheduledEventAttributes;
    if (attrs?.activityType?.name !== 'retryDelivery') return [];
    const data = e.userMetadata?.summary?.data;
    return [{ summary: data ? (JSON.parse(Buffer.from(data).toString('utf8')) as string) : undefined, maximumAttempts: attrs.retryPolicy?.maximumAttempts ?? 0 }];
  });
}

describe('the workflow sandbox (src/temporal/workflow-sandbox.ts)', () => {
  it('npm install applied patches/ to the Temporal worker, so workflow calls can go without a watchdog', () => {
    expect(sandboxPatchApplied()).toBe(true);
    const before = process.env.TEMPORAL_WORKFLOW_STACK_TRACES;
    try {
      expect(workflowSandboxOptions(false)).toEqual({ isolateExecutionTimeout: 0 });
      expect(process.env.TEMPORAL_WORKFLOW_STACK_TRACES).toBe('off');
      expect(workflowSandboxOptions(true)).toEqual({});
      expect(process.env.TEMPORAL_WORKFLOW_STACK_TRACES).toBeUndefined();
    } finally {
      if (before === undefined) delete process.env.TEMPORAL_WORKFLOW_STACK_TRACES;
      else process.env.TEMPORAL_WORKFLOW_STACK_TRACES = before;
    }
  });

  it('a worker with the defaults takes no stack trace per Promise: a waiting workflow has no __stack_trace to give', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver(status(500));
    const hook = await webhook(sys, acct.testKey, receiver.url);
    await publish(sys, acct.user.id, 'test');
    // The first failure starts the webhook's health workflow, which then waits on a condition.
    const handle = client.workflow.getHandle(healthWorkflowId(hook.id));
    await eventually(async () => ((await handle.describe().catch(() => undefined))?.status.name === 'RUNNING' ? true : undefined), 20_000, 'health workflow');
    // With the SDK's promise hook this answers where webhookHealth waits.
    await expect(handle.query<string>('__stack_trace')).rejects.toThrow(/stack traces are not enabled/);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.terminate('test over');
    await receiver.close();
  });
});

/**
 * Every search-attribute upsert in the run's history, in order: the ShiphookEventStatus
 * it set, or null for one that set something else (a `patched()` call's TemporalChangeVersion).
 */
async function upserts(workflowId: string): Promise<(string | null)[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const attrs = e.upsertWorkflowSearchAttributesEventAttributes;
    if (!attrs) return [];
    const field = attrs.searchAttributes?.indexedFields?.ShiphookEventStatus;
    return [field?.data ? (JSON.parse(Buffer.from(field.data).toString('utf8')) as string) : null];
  });
}

/** A failed event's run once it waits for a replay: Running, `failed` upserted, on its one timer (whose expiry it gives). */
async function failedAndWaiting(workflowId: string) {
  const handle = client.workflow.getHandle(workflowId);
  return eventually(async () => {
    const d = await handle.describe();
    const timer = (await handle.fetchHistory()).events?.find((e) => e.timerStartedEventAttributes && e.userMetadata?.summary);
    if (d.status.name !== 'RUNNING' || d.typedSearchAttributes.get(EventStatusAttr) !== 'failed' || !timer) return undefined;
    const started = Number(timer.eventTime!.seconds) * 1000;
    const ms = Number(timer.timerStartedEventAttributes!.startToFireTimeout!.seconds) * 1000;
    return { runId: d.runId, timer: { expirationTime: new Date(started + ms).toISOString() } };
  }, 20_000, `the run of ${workflowId} to wait, failed`);
}

/** Why a run was terminated, as its history (and the UI) says. */
async function terminationReason(workflowId: string, runId: string): Promise<string | undefined> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  return history.events?.find((e) => e.workflowExecutionTerminatedEventAttributes)?.workflowExecutionTerminatedEventAttributes?.reason ?? undefined;
}

/** The workflow ids a visibility query finds, once it finds any (visibility is eventually consistent). */
async function workflowsFound(query: string): Promise<string[]> {
  return eventually(async () => {
    const found: string[] = [];
    for await (const wf of client.workflow.list({ query })) found.push(wf.workflowId);
    return found.length ? found : undefined;
  }, 15_000, 'visibility');
}

/** The run returned `status`, its attribute says it, and it upserted exactly `statuses` on the way, and nothing else. */
async function expectClosedWith(workflowId: string, status: string, statuses: string[]): Promise<void> {
  const handle = client.workflow.getHandle(workflowId);
  expect(await handle.result()).toBe(status);
  expect((await handle.describe()).typedSearchAttributes.get(EventStatusAttr)).toBe(status);
  expect(await upserts(workflowId)).toEqual(statuses);
}
