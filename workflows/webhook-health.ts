import { condition, continueAsNew, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { failingSignal, recoveredSignal, type WebhookHealth } from '../src/engine/contract';

const { disableIfSustained } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1s', maximumInterval: '1 minute' },
});

/** Checks per run before continuing as new: keeps the history short. */
const CHECKS_PER_RUN = 200;
/** With nothing to watch for this long the workflow ends; the next run of failures starts it again. */
const IDLE_MS = 7 * 24 * 60 * 60 * 1000;
/** When the span has passed but not enough attempts failed yet, look again this often (at most). */
const RECHECK_MS = 60 * 60 * 1000;

/**
 * One long-lived workflow per webhook (id `webhook-health-<hook_id>`), started by
 * signalWithStart from delivery attempts. Failed attempts are counted in the
 * webhook row (one atomic UPDATE each); this workflow hears only when a run of
 * failures starts and ends, so an endpoint that is down costs Temporal a few
 * signals, not one per attempt. It disables the webhook when the run is
 * sustained: at least `disableAfterFailures` attempts in a row that span at least
 * `disableAfterMs`. The waiting is a durable timer, visible in the UI.
 */
export const webhookHealth: WebhookHealth = async (input) => {
  let failingSince = input.failingSince;
  setHandler(failingSignal, ({ since }) => void (failingSince = since));
  setHandler(recoveredSignal, () => void (failingSince = undefined));

  for (let check = 0; check < CHECKS_PER_RUN; check++) {
    if (failingSince === undefined) {
      if (!(await condition(() => failingSince !== undefined, IDLE_MS))) return;
      continue;
    }
    const since = failingSince;
    const runChanged = () => failingSince !== since;
    // Workflow time is deterministic: Date.now() here is the time of the current task.
    const due = since + input.disableAfterMs - Date.now();
    if (due > 0 && (await condition(runChanged, due))) continue;
    const verdict = await disableIfSustained(input.webhookId, since, input.disableAfterFailures, input.disableAfterMs);
    if (verdict === 'not yet') {
      // The span has passed but fewer attempts than the threshold failed so far.
      await condition(runChanged, Math.min(input.disableAfterMs, RECHECK_MS));
    } else if (!runChanged()) {
      failingSince = undefined; // disabled, or the run ended meanwhile
    }
  }
  await continueAsNew<WebhookHealth>({ ...input, failingSince });
};
