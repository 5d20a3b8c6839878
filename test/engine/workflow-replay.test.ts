import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowBundle } from '../../src/engine/bundle';
import { healthWorkflowId } from '../../src/engine/contract';
import { eventStatus, publish, webhook } from '../support/events';
import { call, createAccount } from '../support/http';
import { type Answer, eventually, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

/**
 * Workflow code must replay the histories of runs that are still open when a new
 * version is deployed (an event can wait days for its retries, and a failed one's run
 * waits for a replay until retention). test/fixtures/histories/ holds the baseline,
 * histories of today's workflows: every delivery outcome, a delivery still waiting for
 * its retry (on a timer, in its activity), and the health workflow
 * disabling a webhook, restarting on its re-enable and ending on its delete.
 *
 * Before 1.0 (package.json's version) no deployment holds runs of older code: a change
 * to a workflow re-records the baseline (delete the old files, then
 * `SHIPHOOK_RECORD_HISTORIES=<date> npx vitest run test/engine/workflow-replay.test.ts`),
 * and workflows/ holds no version branch (test/engine/no-version-branches.test.ts).
 * From 1.0 on, the baseline only grows: a change that alters the commands a recorded run
 * issues fails here and needs `patched()` (or a new workflow type) so runs in flight keep
 * their path.
 */
const FIXTURES = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
const RECORD = process.env.SHIPHOOK_RECORD_HISTORIES;
/** What the baseline holds: each name is recorded by a test below. */
const BASELINE = [
  'delivered',
  'retried-then-delivered',
  'failed-waiting-for-replay',
  'open-waiting-on-timer',
  'open-waiting-in-retry',
  'health-disabled-then-reenabled',
  'health-continued-then-deleted',
];

let sys: TestSystem;
let bundle: { code: string } | { codePath: string };

beforeAll(async () => {
  sys = await startSystem();
  bundle = await workflowBundle(undefined);
});
afterAll(async () => {
  await sys.close();
});

type History = temporal.api.history.v1.IHistory;

/** Whether the history ends its run (completed, failed, terminated, continued as new, …). */
const closes = (h: History) =>
  (h.events ?? []).some(
    (e) =>
      e.workflowExecutionCompletedEventAttributes ||
      e.workflowExecutionFailedEventAttributes ||
      e.workflowExecutionTerminatedEventAttributes ||
      e.workflowExecutionContinuedAsNewEventAttributes ||
      e.workflowExecutionTimedOutEventAttributes ||
      e.workflowExecutionCanceledEventAttributes,
  );

const replay = (history: History, workflowId: string) =>
  Worker.runReplayHistory({ workflowBundle: bundle, replayName: 'shiphook-replay-test' }, history, workflowId);

/** A run's history as it is now (written as a fixture when recording), to replay. */
async function kept(name: string, handle: WorkflowHandle, runId?: string) {
  const client = await sys.temporal();
  const history = await client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
  if (RECORD) {
    mkdirSync(FIXTURES, { recursive: true });
    writeFileSync(path.join(FIXTURES, `${RECORD}-${name}.json`), JSON.stringify(history, null, 1));
  }
  return { name, history, workflowId: handle.workflowId };
}

/** One event to a fresh receiver answering `answers` in turn; its workflow's handle. */
async function delivery(answers: Answer[]) {
  const acct = await createAccount(sys);
  const receiver = await startReceiver((d, i, res) => answers[Math.min(i, answers.length - 1)]!(d, i, res));
  const hook: { id: string } = await webhook(sys, acct.testKey, receiver.url);
  const event = await publish(sys, acct.user.id, 'test');
  return { acct, receiver, hook, event, handle: (await sys.temporal()).workflow.getHandle(event.id) };
}

/** A delivery run that ends with `completed`. */
async function closedRun(name: string, answers: Answer[]) {
  const { acct, receiver, event, handle } = await delivery(answers);
  await eventStatus(sys, acct.testKey, event.id, 'completed');
  await handle.result(); // the run closes a moment after the database has the final status
  await receiver.close();
  return kept(name, handle);
}

/** A delivery run whose event failed, recorded once it waits for a replay (then ended, as a replay ends it). */
async function failedRun(name: string) {
  const { acct, receiver, event, handle } = await delivery([status(500)]);
  await eventStatus(sys, acct.testKey, event.id, 'failed');
  const waitsForReplay = (e: temporal.api.history.v1.IHistoryEvent) => e.timerStartedEventAttributes && e.userMetadata?.summary;
  await eventually(async () => ((await handle.fetchHistory()).events ?? []).some(waitsForReplay) || undefined, 20_000, `${name}: the run to wait for a replay`);
  const run = await kept(name, handle);
  await handle.terminate('its history is recorded');
  await receiver.close();
  return run;
}

/** A delivery run still open, its history recorded once it shows `waiting` (then ended: nothing else needs it). */
async function openRun(name: string, retryAfterSeconds: number, waiting: (e: temporal.api.history.v1.IHistoryEvent) => unknown) {
  const { receiver, handle } = await delivery([status(503, { 'retry-after': String(retryAfterSeconds) })]);
  await eventually(async () => ((await handle.fetchHistory()).events ?? []).some(waiting) || undefined, 20_000, `${name}: the run to wait for its retry`);
  const run = await kept(name, handle);
  await handle.terminate('its history is recorded');
  await receiver.close();
  return run;
}

describe('delivery workflows replay', () => {
  it('runs of today’s code replay: delivered at once, retried then delivered, failed and waiting for a replay, and still waiting for a retry', async () => {
    const runs = await Promise.all([
      closedRun('delivered', [status(200)]),
      closedRun('retried-then-delivered', [status(500), status(200)]),
      failedRun('failed-waiting-for-replay'),
      // A retry due later than the activity would wait: a durable timer.
      openRun('open-waiting-on-timer', 3600, (e) => e.timerStartedEventAttributes),
      // A retry due soon: the retry activity is scheduled and waits for its time.
      openRun('open-waiting-in-retry', 12, (e) => e.activityTaskScheduledEventAttributes),
    ]);
    expect(runs.map((r) => [r.name, closes(r.history)])).toEqual([
      ['delivered', true],
      ['retried-then-delivered', true],
      ['failed-waiting-for-replay', false],
      ['open-waiting-on-timer', false],
      ['open-waiting-in-retry', false],
    ]);
    for (const { history, workflowId } of runs) await replay(history, workflowId);
  });
});

describe('the health workflow replays', () => {
  it('a run of failures that disables the webhook, a re-enable (continued as new), then a delete (ended)', async () => {
    const { acct, receiver, hook, event } = await delivery([status(500)]);
    const client = await sys.temporal();
    const health = client.workflow.getHandle(healthWorkflowId(hook.id));
    const described = () => health.describe().catch(() => undefined);
    // Disabled under the suite's policy (4 failures over 1 s); the delivery then stops.
    await eventually(async () => ((await call(sys, 'GET', `/webhooks/${hook.id}/health`, { key: acct.testKey })).body.status === 'disabled') || undefined, 20_000, 'the webhook to be disabled');
    await eventStatus(sys, acct.testKey, event.id, 'failed');
    const first = (await described())!;
    expect(first.status.name).toBe('RUNNING');

    expect((await call(sys, 'PATCH', `/webhooks/${hook.id}`, { key: acct.testKey, body: {} })).status).toBe(201);
    const second = await eventually(async () => {
      const d = await described();
      return d && d.runId !== first.runId ? d : undefined;
    }, 20_000, 'the health workflow to continue as new');
    await expect(client.workflow.getHandle(health.workflowId, first.runId).describe()).resolves.toMatchObject({ status: { name: 'CONTINUED_AS_NEW' } });

    expect((await call(sys, 'DELETE', `/webhooks/${hook.id}`, { key: acct.testKey })).status).toBe(200);
    await eventually(async () => ((await described())?.status.name === 'COMPLETED') || undefined, 20_000, 'the health workflow to end');
    await receiver.close();

    const runs = [await kept('health-disabled-then-reenabled', health, first.runId), await kept('health-continued-then-deleted', health, second.runId)];
    const activities = (h: History) => (h.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes).map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name);
    expect(activities(runs[0]!.history)).toContain('decideHealth');
    for (const { history, workflowId } of runs) await replay(history, workflowId);
  });
});

describe('the recorded baseline', () => {
  it('replays on today’s workflows, and covers every run above', async () => {
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));
    const newest = files.map((f) => f.slice(0, 10)).sort().at(-1);
    expect(files.filter((f) => f.startsWith(`${newest}-`)).map((f) => f.slice(11, -5)).sort()).toEqual([...BASELINE].sort());
    for (const file of files) {
      // The message's own JSON (what JSON.stringify of a fetched history writes), read
      // back by the same generated code (the SDK's historyFromJSON trips over a second
      // copy of protobufjs in this install).
      const history = temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(path.join(FIXTURES, file), 'utf8')));
      await expect(replay(history, file), file).resolves.toBeUndefined();
    }
  });
});
