import { expect, it } from 'vitest';
import { BURST, endpoint, everythingDelivered, expectAlive, FAULT_TEST_TIMEOUT_MS, faultSystem, RECOVERY_TIMEOUT_MS, killHard, report, startBurst, until } from './harness';

it('kill -9 of the api while it publishes, then a new api: every committed event is delivered to every URL and completes', async () => {
  const f = await faultSystem();
  try {
    const endpoints = f.receivers.map(endpoint);
    let api = f.api;
    const burst = startBurst(() => api.sys, f.account.user.id);
    // Requests are in flight all the time: some die between their commit and their answer.
    await until(() => burst.acknowledged.length >= 150, 120_000, '150 events published');
    const publishedAtKill = burst.acknowledged.length;
    await killHard(api);
    const restarted = Date.now();
    api = await f.iso.apiProcess({ port: f.api.port }); // same URL: the publisher's retries reach it
    await burst.done;
    const observed = await everythingDelivered(f.iso.api.db, f.account.user.id, endpoints, RECOVERY_TIMEOUT_MS, [api, f.worker]);
    expect(burst.acknowledged.length).toBe(BURST);
    expect(observed.events).toBeGreaterThanOrEqual(BURST); // plus any committed whose answer the kill lost
    expect(publishedAtKill).toBeLessThan(BURST);
    expect(burst.answers.network ?? 0).toBeGreaterThan(0); // the kill was felt by the publisher
    expectAlive(api, f.worker);
    report('api killed', { ...observed, publishedAtKill, committedWithoutAnswer: observed.events - BURST, refusedRequests: burst.answers.network, recoveredInMs: Date.now() - restarted });
  } finally {
    await f.close();
  }
}, FAULT_TEST_TIMEOUT_MS);
