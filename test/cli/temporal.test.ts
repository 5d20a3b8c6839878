import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { writeDevState } from '../../src/cli/dev-state';
import { untilDisabled, eventStatus, publish, webhook } from '../support/events';
import { call, createAccount } from '../support/http';
import { eventually, startReceiver, status, type Receiver } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

const CLI = new URL('../../bin/shiphook.mjs', import.meta.url).pathname;
const exec = promisify(execFile);

/** `npx shiphook temporal …` as an operator types it; only the given variables beyond the test process's own (TEMPORAL_ADDRESS removed). */
async function shiphookTemporal(args: string[], env: Record<string, string>) {
  const { TEMPORAL_ADDRESS: _ignored, ...base } = process.env;
  return exec(process.execPath, [CLI, 'temporal', ...args], { env: { ...base, ...env }, timeout: 60_000 });
}
const workflowIds = (json: string): string[] => {
  const text = json.trim();
  if (!text) return [];
  // `-o json` prints an array, or one object per line depending on the CLI's version.
  const parsed = text.startsWith('[') ? (JSON.parse(text) as unknown[]) : text.split('\n').map((l) => JSON.parse(l) as unknown);
  return parsed.map((w) => (w as { execution: { workflowId: string } }).execution.workflowId);
};

/** Each listed run's status (`COMPLETED`, `TERMINATED`, …), newest first, and its run id. */
const listed = (json: string) => {
  const text = json.trim();
  const parsed = text.startsWith('[') ? (JSON.parse(text) as unknown[]) : text.split('\n').map((l) => JSON.parse(l) as unknown);
  return parsed as { status: string; execution: { runId: string } }[];
};
const runStatuses = (json: string) => listed(json).map((w) => String(w.status).replace('WORKFLOW_EXECUTION_STATUS_', ''));
const runIds = (json: string) => listed(json).map((w) => w.execution.runId);

let sys: TestSystem;
let ok: Receiver;
let down: Receiver;
let dataDir: string;

beforeAll(async () => {
  sys = await startSystem();
  ok = await startReceiver(status(200));
  down = await startReceiver(status(503));
  dataDir = mkdtempSync(path.join(tmpdir(), 'shiphook-temporal-cli-'));
});
afterAll(async () => {
  await Promise.all([ok.close(), down.close(), sys.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('shiphook temporal', () => {
  it("runs the provisioned temporal CLI with the README's queries: one event's runs, a webhook's failing deliveries, an object's runs", async () => {
    // Paths of their own: a port may have served another test file's receiver earlier in the run.
    const okUrl = `${ok.url}/temporal-cli-${process.pid}-${Date.now()}`;
    const downUrl = `${down.url}/temporal-cli-${process.pid}-${Date.now()}`;
    const acct = await createAccount(sys);
    await webhook(sys, acct.testKey, okUrl);
    const failingAcct = await createAccount(sys);
    const failingHook = await webhook(sys, failingAcct.testKey, downUrl);
    const tracker = `trk_${randomBytes(16).toString('hex')}`;
    const delivered = await publish(sys, acct.user.id, 'test', { result: { object: 'Tracker', id: tracker, status: 'in_transit' } });
    const failed = await publish(sys, failingAcct.user.id, 'test');
    await eventStatus(sys, acct.testKey, delivered.id, 'completed');
    await eventStatus(sys, failingAcct.testKey, failed.id, 'failed', 30_000);
    const env = { TEMPORAL_ADDRESS: inject('temporalAddress') };

    const runs = await shiphookTemporal(['workflow', 'list', '--query', `ShiphookEventId='${delivered.id}'`, '-o', 'json'], env);
    expect(workflowIds(runs.stdout)).toEqual([delivered.id]);

    // The README's query, what is failing now at a webhook: a failed event's run stays open
    // (waiting for a replay or recovery), so it is found as Running, as one still retrying is.
    const failingNow = (url: string) => `ShiphookWebhookUrls='${url}' AND ExecutionStatus='Running'`;
    const list = async (query: string) => workflowIds((await shiphookTemporal(['workflow', 'list', '--query', query, '-o', 'json'], env)).stdout);
    expect(await list(failingNow(downUrl))).toEqual([failed.id]);
    // Of those, the ones that failed (visibility has the run's upsert a moment after the database has the status).
    expect(await eventually(async () => {
      const ids = await list(`${failingNow(downUrl)} AND ShiphookEventStatus='failed'`);
      return ids.length ? ids : undefined;
    }, 15_000, 'the failed run in visibility')).toEqual([failed.id]);
    expect(await list(failingNow(okUrl))).toEqual([]);

    // The endpoint is fixed and what it missed recovered: the event is delivered, and no
    // longer listed. Its first run is Terminated, with the recovery named; the second completed.
    down.answer(status(200));
    const key = failingAcct.testKey;
    await untilDisabled(sys, key, failingHook.id);
    expect((await call(sys, 'PATCH', `/webhooks/${failingHook.id}`, { key, body: {} })).status).toBe(201);
    const recovery = await call(sys, 'POST', `/webhooks/${failingHook.id}/recover`, { key, body: { since: failed.created_at } });
    expect(recovery.body).toMatchObject({ matched: 1 });
    await eventStatus(sys, key, failed.id, 'completed');
    await eventually(async () => ((await list(failingNow(downUrl))).length === 0 ? true : undefined), 15_000, 'the recovered event to be listed no more');
    const both = await shiphookTemporal(['workflow', 'list', '--query', `ShiphookEventId='${failed.id}'`, '-o', 'json'], env);
    expect(runStatuses(both.stdout)).toEqual(['COMPLETED', 'TERMINATED']);
    const first = await shiphookTemporal(['workflow', 'describe', '--workflow-id', failed.id, '--run-id', runIds(both.stdout)[1]!, '-o', 'json'], env);
    expect(first.stdout).toContain(`replayed by ${recovery.body.id}`);
    // Every run about one object (its result.id).
    const about = await shiphookTemporal(['workflow', 'list', '--query', `ShiphookObjectId='${tracker}'`, '-o', 'json'], env);
    expect(workflowIds(about.stdout)).toEqual([delivered.id]);

    // An endpoint that does not answer: its event is found while its attempts go on.
    const held: ServerResponse[] = [];
    const hanging = await startReceiver((_d, _i, res) => void held.push(res));
    try {
      const hangUrl = `${hanging.url}/temporal-cli-${process.pid}-${Date.now()}`;
      const slowAcct = await createAccount(sys);
      await webhook(sys, slowAcct.testKey, hangUrl);
      const retrying = await publish(sys, slowAcct.user.id, 'test');
      await eventually(async () => (hanging.deliveries.length > 0 ? true : undefined), 10_000, 'the first attempt');
      expect(await list(failingNow(hangUrl))).toEqual([retrying.id]);
    } finally {
      for (const res of held) res.end();
      await hanging.close();
    }
  });

  it("finds the running `npm start`'s dev server without TEMPORAL_ADDRESS, and passes the CLI's exit status on", async () => {
    writeDevState(dataDir, { databaseUrl: 'postgres://unused', temporalAddress: inject('temporalAddress'), pid: process.pid });
    const listed = await shiphookTemporal(['workflow', 'list', '--limit', '1', '-o', 'json'], { SHIPHOOK_DATA_DIR: dataDir });
    expect(workflowIds(listed.stdout)).toHaveLength(1);

    const missing = await shiphookTemporal(['workflow', 'describe', '--workflow-id', 'evt_no_such_event'], { SHIPHOOK_DATA_DIR: dataDir }).catch((err: { code: number; stderr: string }) => err);
    expect(missing).toMatchObject({ code: expect.any(Number) });
    expect((missing as { code: number }).code).not.toBe(0);
    expect((missing as { stderr: string }).stderr).toMatch(/not found/i);
  });
});
