import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowBundle } from '../../src/engine/bundle';
import { eventStatus, publish, webhook } from '../support/events';
import { createAccount } from '../support/http';
import { type Answer, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

/**
 * Workflow code must replay the histories of runs that are still open when a new
 * version is deployed (an event can wait days for its retries). The histories in
 * test/fixtures/histories/ (the first ones: the baseline recorded before the first
 * release) must replay on today's workflows: a change that alters the commands a run in flight has already
 * recorded fails here, and needs `patched()` (or a new workflow type) so old runs
 * keep their path. Record today's runs as fixtures when a version is released:
 * `SHIPHOOK_RECORD_HISTORIES=<date> npx vitest run test/engine/workflow-replay.test.ts`.
 */
const FIXTURES = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
const RECORD = process.env.SHIPHOOK_RECORD_HISTORIES;

let sys: TestSystem;
let bundle: { code: string } | { codePath: string };

beforeAll(async () => {
  sys = await startSystem();
  bundle = await workflowBundle(undefined);
});
afterAll(async () => {
  await sys.close();
});

const replay = (history: temporal.api.history.v1.IHistory, workflowId: string) =>
  Worker.runReplayHistory({ workflowBundle: bundle, replayName: 'shiphook-replay-test' }, history, workflowId);

/** One event to one receiver answering `answers` in turn; the history of its closed run. */
async function recordedRun(name: string, answers: Answer[], final: 'completed' | 'failed') {
  const acct = await createAccount(sys);
  const receiver = await startReceiver((d, i, res) => (answers[Math.min(i, answers.length - 1)]!)(d, i, res));
  await webhook(sys, acct.testKey, receiver.url);
  const event = await publish(sys, acct.user.id, 'test');
  await eventStatus(sys, acct.testKey, event.id, final);
  const handle = (await sys.temporal()).workflow.getHandle(event.id);
  await handle.result(); // the run closes a moment after the database has the final status
  await receiver.close();
  const history = await handle.fetchHistory();
  if (RECORD) {
    mkdirSync(FIXTURES, { recursive: true });
    writeFileSync(path.join(FIXTURES, `${RECORD}-${name}.json`), JSON.stringify(history, null, 1));
  }
  return { history, workflowId: event.id };
}

describe('delivery workflows replay', () => {
  it('runs of today’s code replay: delivered at once, retried then delivered, failed', async () => {
    const runs = await Promise.all([
      recordedRun('delivered', [status(200)], 'completed'),
      recordedRun('retried-then-delivered', [status(500), status(200)], 'completed'),
      recordedRun('failed', [status(500)], 'failed'),
    ]);
    for (const { history, workflowId } of runs) await replay(history, workflowId);
  });

  it('histories recorded by earlier versions replay on today’s workflows', async () => {
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      // The message's own JSON (what JSON.stringify of a fetched history writes), read
      // back by the same generated code (the SDK's historyFromJSON trips over a second
      // copy of protobufjs in this install).
      const history = temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(path.join(FIXTURES, file), 'utf8')));
      await expect(replay(history, file), file).resolves.toBeUndefined();
    }
  });
});
