import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopChild } from '../../src/launcher/temporal';
import { freePort } from '../../src/launcher/free-port';
import { eventStatus, publish, webhook } from '../support/events';
import { call, createAccount } from '../support/http';
import { eventually, startReceiver, status } from '../support/receiver';
import { startSystem, testConfig, type TestSystem } from '../support/system';
import { TEST_ENV } from '../support/test-config';

let sys: TestSystem;

beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.close());

function startWorker(taskQueue: string): ChildProcess {
  const config = testConfig();
  return spawn(process.execPath, [path.resolve('bin/shiphook.mjs'), 'worker'], {
    env: { ...process.env, ...TEST_ENV, DATABASE_URL: config.databaseUrl, TEMPORAL_ADDRESS: config.temporalAddress, SHIPHOOK_TASK_QUEUE: taskQueue },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

describe('durability', () => {
  it('the worker killed mid-delivery and restarted → the event still completes', async () => {
    const taskQueue = `kill-test-${process.pid}-${Date.now()}`;
    const own = await startSystem({ taskQueue });
    const acct = await createAccount(own);
    const receiver = await startReceiver(status(500));
    await webhook(own, acct.testKey, receiver.url);
    let worker = startWorker(taskQueue);
    try {
      const event = await publish(own, acct.user.id, 'test');
      await receiver.waitFor(1, 30_000);
      worker.kill('SIGKILL'); // mid-delivery: during the first attempt or on its retry timer
      receiver.answer(status(200));
      worker = startWorker(taskQueue);
      await eventStatus(own, acct.testKey, event.id, 'completed', 40_000);
      expect(receiver.deliveries.filter((d) => d.json?.id === event.id).length).toBeGreaterThanOrEqual(2);
    } finally {
      await stopChild(worker);
      await receiver.close();
      await own.close();
    }
  });

  it('Temporal unreachable while publishing → the event is committed and delivered once it is reachable', async () => {
    const deadPort = await freePort();
    const offline = await startSystem({ temporalAddress: `127.0.0.1:${deadPort}` });
    const acct = await createAccount(offline);
    const receiver = await startReceiver();
    await webhook(offline, acct.testKey, receiver.url);
    const event = await publish(offline, acct.user.id, 'test'); // the API answers although the start failed
    expect(event.status).toBe('in_queue');
    const row = await sys.db.selectFrom('events').select('dispatched_at').where('id', '=', event.id).executeTakeFirstOrThrow();
    expect(row.dispatched_at).toBeNull();
    // The worker's outbox sweeper (connected to the real Temporal) starts it.
    await eventStatus(sys, acct.testKey, event.id, 'completed', 30_000);
    expect(receiver.deliveries.map((d) => d.json.id)).toEqual([event.id]);
    await receiver.close();
    await offline.close();
  });

  it('a duplicate start is harmless: one delivery per URL recorded as completed', async () => {
    const acct = await createAccount(sys);
    const receiver = await startReceiver();
    await webhook(sys, acct.testKey, receiver.url);
    const event = await publish(sys, acct.user.id, 'test');
    await eventStatus(sys, acct.testKey, event.id, 'completed');
    // Pretend the publisher died before it could record the start: the sweeper starts it again.
    await sys.db.updateTable('events').set({ dispatched_at: null }).where('id', '=', event.id).execute();
    await eventually(async () => {
      const row = await sys.db.selectFrom('events').select('dispatched_at').where('id', '=', event.id).executeTakeFirstOrThrow();
      return row.dispatched_at ?? undefined;
    }, 15_000, 'the sweeper to start the event again');
    await new Promise((r) => setTimeout(r, 1000));
    expect(receiver.deliveries).toHaveLength(1);
    const payloads = (await call(sys, 'GET', `/events/${event.id}/payloads`, { key: acct.testKey })).body.payloads;
    expect(payloads).toHaveLength(1);
    const again = await call(sys, 'GET', `/events/${event.id}`, { key: acct.testKey });
    expect(again.body).toMatchObject({ status: 'completed', completed_urls: [receiver.url], pending_urls: [] });
    await receiver.close();
  });
});
