import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStatusAttr, EventTypeAttr, healthWorkflowId, ModeAttr, UserIdAttr, WebhookUrlsAttr } from '../../src/engine/contract';
import { sandboxPatchApplied, workflowSandboxOptions } from '../../src/engine/sandbox';
import { eventStatus, publish, webhook } from '../support/events';
import { createAccount } from '../support/http';
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

  it('see an event that did not succeed at once: Running while it retries, then its outcome', async () => {
    const acct = await createAccount(sys);
    // The first attempt is refused for 12 s (Retry-After; the retry waits in its activity),
    // the second succeeds: 12 s to look at a run that retries, whatever the machine's load.
    const receiver = await startReceiver((d, i, res) => (i === 0 ? status(503, { 'retry-after': '12' }) : status(200))(d, i, res));
    await webhook(sys, acct.testKey, receiver.url);
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

    // Every attempt fails: the run ends with the status failed.
    receiver.answer(status(500));
    const failed = await publish(sys, acct.user.id, 'test', { description: 'tracker.updated' });
    await eventStatus(sys, acct.testKey, failed.id, 'failed');
    await expectClosedWith(failed.id, 'failed', ['failed']);
    await receiver.close();
  });
});

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
