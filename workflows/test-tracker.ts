import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';

export interface TestTrackerInput {
  trackerId: string;
  stepMs: number;
}

const STEPS = ['in_transit', 'out_for_delivery', 'delivered'] as const;

const { advanceTestTracker } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1s', maximumInterval: '1 minute' },
});

/**
 * A test-mode tracker moves by itself, one step every `stepMs` (durable timers),
 * each step publishing `tracker.updated` — so customers exercise their webhook
 * handler end to end without a real carrier.
 */
export async function testTracker(input: TestTrackerInput): Promise<void> {
  for (const status of STEPS) {
    await sleep(input.stepMs);
    await advanceTestTracker(input.trackerId, status);
  }
}
