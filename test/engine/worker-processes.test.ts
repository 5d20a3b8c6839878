import { closeSync, copyFileSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { startShiphookChild } from '../../src/launcher/child';
import { freePort } from '../../src/launcher/ports';
import { shiphookProcessEnv } from '../../src/launcher/process-env';
import { eventStatus, publish, webhook } from '../support/events';
import { call, createAccount } from '../support/http';
import { isolatedSystem } from '../support/isolated';
import { logFile } from '../support/log-capture';
import { eventually, startReceiver } from '../support/receiver';
import { TEST_ENV } from '../support/test-config';
import { workflowBundleFile } from '../support/workflow-bundle';

// How worker processes are run in production: by role, and from a prebuilt workflow bundle.
describe('worker processes', () => {
  it('retries have workers of their own: the first, due within seconds, is made in its event’s task; later ones wait for a retries worker', async () => {
    const iso = await isolatedSystem();
    const receiver = await startReceiver((_d, i, res) => { res.writeHead(i < 2 ? 500 : 200).end(); });
    try {
      const acct = await createAccount(iso.api);
      await webhook(iso.api, acct.testKey, receiver.url);
      await iso.worker({ role: 'deliveries' });
      const event = await publish(iso.api, acct.user.id, 'test');
      await receiver.waitFor(2); // attempt 2 (the first retry), made by the deliveries worker
      await new Promise((r) => setTimeout(r, 1500)); // attempt 3 is due 600 ms later, but nobody serves retries
      expect(receiver.deliveries).toHaveLength(2);
      await eventStatus(iso.api, acct.testKey, event.id, 'retrying');
      await iso.worker({ role: 'retries' });
      await eventStatus(iso.api, acct.testKey, event.id, 'completed', 30_000);
      expect(receiver.deliveries.map((d) => d.json.id)).toEqual([event.id, event.id, event.id]);
    } finally {
      await receiver.close();
      await iso.close();
    }
  });

  it('retries made in tasks take at most a quarter of the worker’s task slots: beyond that, the first retry goes to the retries workers', async () => {
    // Twenty task slots (ten of them polling): five retries wait in their tasks at a time. The first retry is due 5 s after
    // attempt 1; six failures in a row do not disable the webhook.
    const env = { SHIPHOOK_WORKER_TASK_SLOTS: '20', SHIPHOOK_RETRY_DELAYS: '5s', SHIPHOOK_DISABLE_AFTER_FAILURES: '20' };
    const iso = await isolatedSystem({ env });
    const answered = new Map<string, number>();
    const receiver = await startReceiver((d, _i, res) => {
      const id = String(d.json.id);
      answered.set(id, (answered.get(id) ?? 0) + 1);
      res.writeHead(answered.get(id) === 1 ? 500 : 200).end();
    });
    try {
      const acct = await createAccount(iso.api);
      await webhook(iso.api, acct.testKey, receiver.url);
      await iso.worker({ role: 'deliveries', env });
      const events: { id: string }[] = [];
      for (let i = 0; i < 6; i++) events.push(await publish(iso.api, acct.user.id, 'test'));
      await receiver.waitFor(6); // the first attempts failed
      // Five first retries wait in their tasks; the sixth went to the retry task queue, where nobody serves it.
      const temporal = await iso.api.temporal();
      const pending = async () => Promise.all(events.map(async (e) => (await temporal.workflow.getHandle(e.id).describe()).raw.pendingActivities?.length ?? 0));
      await eventually(async () => ((await pending()).sort().join() === '0,0,0,0,0,1' ? true : undefined), 20_000, 'one retry activity');
      const statuses = async () => (await Promise.all(events.map(async (e) => (await call(iso.api, 'GET', `/events/${e.id}`, { key: acct.testKey })).body.status))).sort().join();
      await eventually(async () => ((await statuses()) === 'completed,completed,completed,completed,completed,retrying' ? true : undefined), 20_000, 'the retries made in their tasks to deliver');
      expect(receiver.deliveries).toHaveLength(11);
      await iso.worker({ role: 'retries', env });
      for (const e of events) await eventStatus(iso.api, acct.testKey, e.id, 'completed', 30_000);
      expect(receiver.deliveries).toHaveLength(12);
    } finally {
      await receiver.close();
      await iso.close();
    }
  });

  it('an endpoint that never answers does not hold other endpoints’ first attempts back (more events in flight than 100 local activities or 200 workflow tasks, the earlier limits)', async () => {
    const iso = await isolatedSystem();
    const healthy = await startReceiver();
    const hanging = await startReceiver(() => undefined); // takes the request, never answers
    const events = 230;
    try {
      const acct = await createAccount(iso.api);
      await webhook(iso.api, acct.testKey, healthy.url);
      await webhook(iso.api, acct.testKey, hanging.url);
      // Every first attempt waits the whole timeout for the hanging URL, holding its slots meanwhile.
      await iso.worker({ env: { SHIPHOOK_ATTEMPT_TIMEOUT: '120s' } });
      const started = Date.now();
      for (let i = 0; i < events; i++) await publish(iso.api, acct.user.id, 'test');
      // Well inside the 120 s from the first publish: with 100 first attempts (or 200 workflow
      // tasks) at a time, the rest would wait for the first ones to time out.
      await healthy.waitFor(events, started + 60_000 - Date.now());
      expect(new Set(healthy.deliveries.map((d) => d.json.id)).size).toBe(events);
    } finally {
      await healthy.close();
      await hanging.close();
      await iso.close();
    }
  }, 120_000);

  it('a worker runs from a prebuilt workflow bundle (SHIPHOOK_WORKFLOW_BUNDLE, as the container image does)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'shiphook-bundle-'));
    const bundle = path.join(dir, 'workflow-bundle.js');
    copyFileSync(await workflowBundleFile(), bundle); // written by `shiphook bundle-workflows`, as the image's is
    const iso = await isolatedSystem();
    const receiver = await startReceiver();
    try {
      const acct = await createAccount(iso.api);
      await webhook(iso.api, acct.testKey, receiver.url);
      await iso.worker({ env: { SHIPHOOK_WORKFLOW_BUNDLE: bundle } });
      rmSync(bundle); // loaded at start; the worker needs no bundling and no file afterwards
      const event = await publish(iso.api, acct.user.id, 'test');
      await eventStatus(iso.api, acct.testKey, event.id, 'completed', 30_000);
      expect(receiver.deliveries.map((d) => d.json.id)).toEqual([event.id]);
    } finally {
      await receiver.close();
      await iso.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a worker waiting for an unreachable Temporal keeps its file descriptors from one attempt to the next', async () => {
    const iso = await isolatedSystem();
    const file = logFile(inject('logDir'), `worker-unreachable-${process.pid}`);
    const out = openSync(file, 'a');
    const worker = startShiphookChild({
      command: 'worker',
      env: { ...shiphookProcessEnv(), ...TEST_ENV, LOG_LEVEL: 'debug', DATABASE_URL: iso.databaseUrl, TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`, SHIPHOOK_TASK_QUEUE: iso.taskQueue },
      output: [out, out],
    });
    worker.ready.catch(() => undefined); // it never gets there: stopped below
    const failures = () => readFileSync(file, 'utf8').split('\n').filter((l) => l.includes('connecting to Temporal failed')).length;
    // Read during the wait that follows a logged failure (1 s after the first, 2 s after the second, 5 s after the third).
    const fdsAfter = async (n: number) => {
      await eventually(async () => (failures() >= n ? true : undefined), 30_000, `failed connect ${n}`);
      return readdirSync(`/proc/${worker.process.pid}/fd`).length;
    };
    try {
      const second = await fdsAfter(2);
      const fourth = await fdsAfter(4);
      // Each failed connect of the SDK itself would leave four more (eight here).
      expect(fourth - second).toBeLessThanOrEqual(1);
    } finally {
      await worker.stop();
      closeSync(out);
      await iso.close();
    }
  }, 60_000);

  it('a worker given an address that is not hostname[:port] says so and exits 1 at once (no retrying)', async () => {
    const run = promisify(execFile)(process.execPath, [path.resolve('bin/shiphook.mjs'), 'worker'], {
      env: { ...shiphookProcessEnv(), ...TEST_ENV, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', TEMPORAL_ADDRESS: 'http://localhost:7233' },
      timeout: 30_000,
    });
    const failed = (await run.then(() => undefined, (err: { code: number; stderr: string }) => err))!;
    expect(failed.code).toBe(1);
    expect(failed.stderr.trim()).toBe("shiphook worker: Invalid address for Temporal gRPC endpoint: expected URI of the form 'hostname' or 'hostname:port'; got 'http://localhost:7233'");
  });
});
