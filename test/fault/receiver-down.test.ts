import { expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../support/receiver';
import { BURST, type Endpoint, endpoint, everythingDelivered, expectAlive, FAULT_TEST_TIMEOUT_MS, faultSystem, RECOVERY_TIMEOUT_MS, report, startBurst, until } from './harness';

/** How long the receiver stays down (the figure). */
const DOWN_MS = 30_000;

it('a receiver down for 30 s, then up again (fast retry schedule): everything is delivered to it after it returns', async () => {
  const f = await faultSystem({ receivers: 3 }) // FAULT_ENV: a fast schedule whose retries span 55 s, past the outage;
  const flaky = f.receivers[2]!;
  const port = Number(new URL(flaky.url).port);
  let back: Receiver | undefined;
  try {
    // The flaky URL's deliveries, before it went down and after it came back.
    const flakyEndpoint: Endpoint = { url: flaky.url, deliveries: () => [...flaky.deliveries, ...(back?.deliveries ?? [])] };
    const endpoints = [endpoint(f.receivers[0]!), endpoint(f.receivers[1]!), flakyEndpoint];
    const burst = startBurst(() => f.api.sys, f.account.user.id);
    await until(() => burst.acknowledged.length >= 100, 120_000, '100 events published');
    await flaky.close(); // connections refused from now on
    const down = Date.now();
    const deliveredBeforeDown = flaky.deliveries.length;
    // The outage lasts DOWN_MS while the burst goes on.
    await until(() => Date.now() - down >= DOWN_MS, DOWN_MS + 5000, 'the end of the outage');
    back = await startReceiver(undefined, { port });
    const up = Date.now();
    await burst.done;
    const observed = await everythingDelivered(f.iso.api.db, f.account.user.id, endpoints, RECOVERY_TIMEOUT_MS, [f.api, f.worker]);
    expect(observed.events).toBeGreaterThanOrEqual(BURST);
    // Most of the burst happened while it was down: those all arrived after it came back.
    expect(back.deliveries.length).toBeGreaterThanOrEqual(observed.events - deliveredBeforeDown);
    expectAlive(f.api, f.worker);
    report('receiver down 30 s', { ...observed, deliveredBeforeDown, deliveredAfterUp: back.deliveries.length, downMs: up - down, allDeliveredAfterUpMs: Date.now() - up });
  } finally {
    await back?.close();
    await f.close();
  }
}, FAULT_TEST_TIMEOUT_MS);
