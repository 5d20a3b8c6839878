import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/launcher/ports';
import { startDevTemporal } from '../../src/launcher/temporal';
import { dispatchedAt, eventStatus, publish, webhook } from '../support/events';
import { call, createAccount } from '../support/http';
import { type IsolatedSystem, isolatedSystem } from '../support/isolated';
import { eventually, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';

let sys: TestSystem;

beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

// Worker processes, isolated databases, a dev server of its own: slow on a loaded machine.
describe('durability', { timeout: 180_000 }, () => {
  it('the worker killed mid-delivery and restarted → the event still completes', async () => {
    const iso = await isolatedSystem();
    const receiver = await startReceiver(status(500));
    try {
      const acct = await createAccount(iso.api);
      await webhook(iso.api, acct.testKey, receiver.url);
      const worker = await iso.worker();
      const event = await publish(iso.api, acct.user.id, 'test');
      await receiver.waitFor(1, 30_000);
      worker.kill('SIGKILL'); // mid-delivery: during the first attempt or on its retry timer
      receiver.answer(status(200));
      await iso.worker();
      await eventStatus(iso.api, acct.testKey, event.id, 'completed', 40_000);
      expect(receiver.deliveries.filter((d) => d.json?.id === event.id).length).toBeGreaterThanOrEqual(2);
    } finally {
      await receiver.close();
      await iso.close();
    }
  });

  it('publishing needs only the database: the event waits in the outbox until a worker starts it', async () => {
    const deadTemporal = `127.0.0.1:${await freePort()}`;
    const iso = await isolatedSystem({ temporalAddress: deadTemporal });
    const receiver = await startReceiver();
    try {
      const acct = await createAccount(iso.api);
      await webhook(iso.api, acct.testKey, receiver.url);
      const event = await publish(iso.api, acct.user.id, 'test'); // the API never talks to Temporal to publish
      expect(event).toMatchObject({ status: 'in_queue', pending_urls: [receiver.url], completed_urls: [] });
      expect(await iso.dispatchedAt(event.id)).toBeNull(); // no worker runs on this database yet
      await iso.worker();
      await eventStatus(iso.api, acct.testKey, event.id, 'completed', 30_000);
      expect(receiver.deliveries.map((d) => d.json.id)).toEqual([event.id]);
      expect(await iso.dispatchedAt(event.id)).not.toBeNull();
    } finally {
      await receiver.close();
      await iso.close();
    }
  });

  it('Temporal down while a worker runs → starts fail, the event stays in the outbox and goes out when Temporal is back', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'shiphook-temporal-outage-'));
    const port = await freePort();
    const dbFile = path.join(dir, 'temporal.db');
    let temporal = await startDevTemporal({ cliPath: process.env.TEMPORAL_CLI_PATH, port, dbFile, ui: false });
    let iso: IsolatedSystem | undefined;
    const receiver = await startReceiver();
    try {
      iso = await isolatedSystem({ temporalAddress: temporal.address });
      const acct = await createAccount(iso.api);
      await webhook(iso.api, acct.testKey, receiver.url);
      const worker = await iso.workerProcess({ temporalAddress: temporal.address });
      await temporal.stop();
      const event = await publish(iso.api, acct.user.id, 'test');
      // Two dispatcher passes (notification and timer) fail to start it; it stays claimed by nobody.
      const failedPasses = () => worker.logs.filter((l) => l.includes('delivery starts failed')).length;
      await eventually(async () => (failedPasses() >= 2 ? true : undefined), 60_000, 'two failed dispatcher passes');
      expect(await iso.dispatchedAt(event.id)).toBeNull();
      expect(worker.alive).toBe(true);
      expect(receiver.deliveries).toHaveLength(0);
      temporal = await startDevTemporal({ cliPath: process.env.TEMPORAL_CLI_PATH, port, dbFile, ui: false });
      await eventStatus(iso.api, acct.testKey, event.id, 'completed', 60_000);
      expect(receiver.deliveries.map((d) => d.json.id)).toEqual([event.id]);
    } finally {
      await receiver.close();
      await iso?.close();
      await temporal.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('two workers share one outbox: every event delivered once per URL, none left behind', async () => {
    const iso = await isolatedSystem();
    const receivers = [await startReceiver(), await startReceiver()];
    try {
      const acct = await createAccount(iso.api);
      for (const r of receivers) await webhook(iso.api, acct.testKey, r.url);
      await Promise.all([iso.worker(), iso.worker()]);
      const events = await Promise.all(Array.from({ length: 40 }, () => publish(iso.api, acct.user.id, 'test')));
      for (const r of receivers) await r.waitFor(40, 30_000);
      for (const e of events) await eventStatus(iso.api, acct.testKey, e.id, 'completed');
      for (const r of receivers) expect(r.deliveries.map((d) => d.json.id).sort()).toEqual(events.map((e) => e.id).sort());
    } finally {
      await Promise.all(receivers.map((r) => r.close()));
      await iso.close();
    }
  });

  /** An event delivered to one receiver, and its run closed. */
  async function deliveredEvent() {
    const acct = await createAccount(sys);
    const receiver = await startReceiver();
    await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test');
    await eventStatus(sys, acct.testKey, event.id, 'completed');
    const handle = (await sys.temporal()).workflow.getHandle(event.id);
    const firstRun = await eventually(async () => {
      const d = await handle.describe();
      return d.status.name === 'COMPLETED' ? d.runId : undefined;
    }, 15_000, 'the run to close');
    return { acct, receiver, event, handle, firstRun };
  }

  /** Waits until a dispatcher claimed the event again and marked it dispatched. */
  async function markedAgain(eventId: string) {
    await eventually(async () => (await dispatchedAt(sys, eventId)) ?? undefined, 15_000, 'the dispatcher to claim the event again');
  }

  it('a dispatcher that lost its mark of a delivered event: the next pass marks it without a second run or delivery', async () => {
    const { acct, receiver, event, handle, firstRun } = await deliveredEvent();
    // As if a dispatcher died after the start but before its commit: the next pass claims it again.
    await sys.db.updateTable('events').set({ dispatched_at: null }).where('id', '=', event.id).execute();
    await markedAgain(event.id);
    // Its run delivered everything: no second run (the latest run of its id is still the first).
    expect((await handle.describe()).runId).toBe(firstRun);
    expect(receiver.deliveries).toHaveLength(1);
    const payloads = (await call(sys, 'GET', `/events/${event.id}/payloads`, { key: acct.testKey })).body.payloads;
    expect(payloads).toHaveLength(1);
    const again = await call(sys, 'GET', `/events/${event.id}`, { key: acct.testKey });
    expect(again.body).toMatchObject({ status: 'completed', completed_urls: [receiver.url], pending_urls: [] });
    await receiver.close();
  });

  it('a dispatcher that read a delivery as pending just before its run settled it: the closed run counts as started, no second run or POST', async () => {
    const { receiver, event, handle, firstRun } = await deliveredEvent();
    // What that dispatcher read (the delivery still pending), and its mark lost: the next pass starts it.
    await sys.db.transaction().execute(async (tx) => {
      await tx.updateTable('event_deliveries').set({ state: 'pending' }).where('event_id', '=', event.id).execute();
      await tx.updateTable('events').set({ dispatched_at: null }).where('id', '=', event.id).execute();
    });
    await markedAgain(event.id);
    expect((await handle.describe()).runId).toBe(firstRun);
    expect(receiver.deliveries).toHaveLength(1);
    await receiver.close();
  });
});
