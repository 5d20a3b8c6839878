import { expect, it } from 'vitest';
import { BURST, endpoint, everythingDelivered, expectAlive, FAULT_TEST_TIMEOUT_MS, faultSystem, RECOVERY_TIMEOUT_MS, killHard, received, report, startBurst, until } from './harness';

it('kill -9 of the worker mid-burst, then a new worker: every (event, URL) pair arrives, every event completes', async () => {
  const f = await faultSystem();
  try {
    const endpoints = f.receivers.map(endpoint);
    const burst = startBurst(() => f.api.sys, f.account.user.id);
    // Mid-burst: deliveries under way and events still being published.
    await until(() => received(endpoints) >= 20 || burst.acknowledged.length >= 250, 120_000, 'the first deliveries');
    const publishedAtKill = burst.acknowledged.length;
    const deliveredAtKill = received(endpoints);
    await killHard(f.worker);
    const restarted = Date.now();
    const worker = await f.startWorker();
    await burst.done;
    const observed = await everythingDelivered(f.iso.api.db, f.account.user.id, endpoints, RECOVERY_TIMEOUT_MS, [f.api, worker]);
    expect(observed.events).toBeGreaterThanOrEqual(BURST);
    expect(publishedAtKill).toBeLessThan(BURST);
    expectAlive(f.api, worker);
    report('worker killed', { ...observed, publishedAtKill, deliveredAtKill, recoveredInMs: Date.now() - restarted });
  } finally {
    await f.close();
  }
}, FAULT_TEST_TIMEOUT_MS);
