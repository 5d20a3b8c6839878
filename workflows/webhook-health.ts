import { condition, continueAsNew, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';

export interface HealthInput {
  webhookId: string;
  disableAfterFailures: number;
  disableAfterMs: number;
  /** Carried across continue-as-new. */
  state?: { consecutiveFailures: number; firstFailureAt?: number };
}

export interface HealthReport {
  ok: boolean;
  /** Epoch ms of the attempt. */
  at: number;
}

export const attemptSignal = defineSignal<[HealthReport]>('attempt');

const { disableFailingWebhook } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1s', maximumInterval: '1 minute' },
});

/** Reports handled per run before continuing as new: keeps the history short. */
const REPORTS_PER_RUN = 500;
/** With nothing reported for this long the workflow ends; the next failure starts it again. */
const IDLE_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * One long-lived workflow per webhook (id `webhook-health-<hook_id>`), fed by
 * signalWithStart from delivery attempts. It disables the webhook when failures
 * are sustained: at least `disableAfterFailures` consecutive failed attempts that
 * span at least `disableAfterMs`. A success resets the count.
 */
export async function webhookHealth(input: HealthInput): Promise<void> {
  const queue: HealthReport[] = [];
  setHandler(attemptSignal, (report) => void queue.push(report));
  let { consecutiveFailures, firstFailureAt } = input.state ?? { consecutiveFailures: 0 };
  let handled = 0;

  while (handled < REPORTS_PER_RUN) {
    const active = await condition(() => queue.length > 0, IDLE_MS);
    if (!active) return;
    const report = queue.shift()!;
    handled++;
    if (report.ok) {
      consecutiveFailures = 0;
      firstFailureAt = undefined;
      continue;
    }
    consecutiveFailures++;
    firstFailureAt ??= report.at;
    if (consecutiveFailures >= input.disableAfterFailures && report.at - firstFailureAt >= input.disableAfterMs) {
      await disableFailingWebhook(input.webhookId);
      consecutiveFailures = 0;
      firstFailureAt = undefined;
    }
  }
  // Reports that arrived in the same workflow task are handled before continuing as new.
  for (const report of queue.splice(0)) {
    if (report.ok) {
      consecutiveFailures = 0;
      firstFailureAt = undefined;
    } else {
      consecutiveFailures++;
      firstFailureAt ??= report.at;
    }
  }
  await continueAsNew<typeof webhookHealth>({ ...input, state: { consecutiveFailures, firstFailureAt } });
}
