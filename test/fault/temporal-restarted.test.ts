import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { freePort } from '../../src/launcher/ports';
import { publish } from '../support/events';
import { call } from '../support/http';
import { type DevTemporal, startDevTemporal } from '../../src/launcher/temporal';
import { BURST, endpoint, everythingDelivered, expectAlive, FAULT_TEST_TIMEOUT_MS, faultSystem, RECOVERY_TIMEOUT_MS, received, report, startBurst, until } from './harness';

/**
 * A dev server of the test's own (the suite's shared one is never stopped), on a port
 * and data file of its own, so `start()` again continues where the killed one stopped.
 */
async function ownTemporal(name: string) {
  const dir = mkdtempSync(path.join(tmpdir(), `shiphook-fault-${name}-`));
  const port = await freePort();
  const dbFile = path.join(dir, 'temporal.db');
  const start = () => startDevTemporal({ cliPath: process.env.TEMPORAL_CLI_PATH, port, dbFile, ui: false });
  return { dir, start };
}

it('the Temporal dev server killed mid-burst and started again on the same data file: nothing else dies, everything is delivered', async () => {
  const { dir, start } = await ownTemporal('temporal');
  let temporal: DevTemporal = await start();
  let f: Awaited<ReturnType<typeof faultSystem>> | undefined;
  try {
    f = await faultSystem({ temporalAddress: temporal.address });
    const endpoints = f.receivers.map(endpoint);
    const burst = startBurst(() => f!.api.sys, f.account.user.id);
    await until(() => burst.acknowledged.length >= 100 && (received(endpoints) >= 20 || burst.acknowledged.length >= 250), 120_000, 'deliveries under way');
    const publishedAtKill = burst.acknowledged.length;
    const deliveredAtKill = received(endpoints);
    // The api's own Temporal client (replays) is connected before the kill…
    const replayed = burst.acknowledged[0]!;
    expect((await call(f.api.sys, 'POST', `/events/${replayed}/replay`, { key: f.account.testKey })).status).toBe(200);
    expect(temporal.pid).toBeDefined();
    process.kill(temporal.pid!, 'SIGKILL');
    await temporal.stop(); // returns once the killed server is gone
    const killed = Date.now();
    temporal = await start();
    const restarted = Date.now();
    const timer = process.env.FAULT_DEBUG ? setInterval(() => process.stdout.write(`t+${Date.now() - restarted} received ${received(endpoints)} published ${burst.acknowledged.length}\n`), 5000) : undefined;
    await burst.done;
    const observed = await everythingDelivered(f.iso.api.db, f.account.user.id, endpoints, RECOVERY_TIMEOUT_MS, [f.api, f.worker]).finally(() => {
      clearInterval(timer);
      if (process.env.FAULT_DEBUG) process.stdout.write(f!.worker.logs.join('\n') + '\n');
    });
    expect(observed.events).toBeGreaterThanOrEqual(BURST);
    // …and works again after the restart without restarting the api: a replay to every URL goes out.
    const before = endpoints.map((e) => e.deliveries().filter((d) => d.json?.id === replayed).length);
    const logLines = f.api.logs.length;
    expect((await call(f.api.sys, 'POST', `/events/${replayed}/replay`, { key: f.account.testKey, body: { all: true } })).status).toBe(200);
    await until(() => endpoints.every((e, i) => e.deliveries().filter((d) => d.json?.id === replayed).length > before[i]!), 60_000, 'the replay after the restart');
    expect(f.api.logs.slice(logLines).filter((l) => l.includes('replay start deferred'))).toEqual([]); // started by the api itself
    expect(publishedAtKill).toBeLessThan(BURST);
    expect(Object.keys(burst.answers)).toEqual(['201']); // publishing never needed Temporal
    expectAlive(f.api, f.worker);
    report('temporal restarted', { ...observed, publishedAtKill, deliveredAtKill, downMs: restarted - killed, recoveredInMs: Date.now() - restarted });
  } finally {
    await f?.close();
    await temporal.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}, FAULT_TEST_TIMEOUT_MS);

/** Longer than the minute after which the SDK used to fail a worker whose polls fail (sdk-typescript#290, sdk-python#631). */
const LONG_OUTAGE_MS = 70_000;

it('Temporal down for over a minute: the worker process stays up (its SDK worker keeps polling, or is recreated) and delivers when Temporal is back', async () => {
  const { dir, start } = await ownTemporal('temporal-long');
  let temporal: DevTemporal = await start();
  let f: Awaited<ReturnType<typeof faultSystem>> | undefined;
  try {
    f = await faultSystem({ temporalAddress: temporal.address, receivers: 1 });
    const [receiver] = f.receivers;
    await temporal.stop();
    const stopped = Date.now();
    const event = await publish(f.iso.api, f.account.user.id, 'test'); // waits in the outbox
    await until(() => Date.now() - stopped >= LONG_OUTAGE_MS, LONG_OUTAGE_MS + 5000, 'the end of the outage');
    expect(f.worker.alive).toBe(true);
    temporal = await start();
    const restarted = Date.now();
    await receiver!.waitFor(1, 120_000);
    expect(receiver!.deliveries.map((d) => d.json.id)).toEqual([event.id]);
    expectAlive(f.api, f.worker);
    report('temporal down 70 s', {
      deliveredAfterRestartMs: receiver!.deliveries[0]!.at - restarted,
      sdkWorkerRecreated: f.worker.logs.some((l) => l.includes('Temporal worker failed; creating it again')),
    });
  } finally {
    await f?.close();
    await temporal.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}, FAULT_TEST_TIMEOUT_MS);
