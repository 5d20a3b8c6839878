import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { TestTracker } from '../src/engine/contract';

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
export const testTracker: TestTracker = async (input) => {
  for (const status of STEPS) {
    await sleep(input.stepMs);
    await advanceTestTracker(input.trackerId, status);
  }
};
