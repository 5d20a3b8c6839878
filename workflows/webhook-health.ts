import { condition, continueAsNew, patched, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { deletedSignal, failingSignal, reenabledSignal, recoveredSignal, type WebhookHealth } from '../src/engine/contract';

const { decideHealth, disableIfSustained } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1s', maximumInterval: '1 minute' },
});

/** Checks per run before continuing as new: keeps the history short. */
const CHECKS_PER_RUN = 200;
/** With nothing to watch for this long the workflow ends; the next run of failures starts it again. */
const IDLE_MS = 7 * 24 * 60 * 60 * 1000;
/** Runs started before this change held the policy in their input; see `upgraded` below. */
const LEGACY_RECHECK_MS = 60 * 60 * 1000;
/** Marks, in a run's history, the point from which it decides with the current policy. */
const POLICY_WHEN_DECIDING = 'policy-read-when-deciding';

/**
 * One long-lived workflow per webhook (id `webhook-health-<hook_id>`), started by
 * signalWithStart from delivery attempts. Failed attempts are counted in the
 * webhook row (one atomic UPDATE each); this workflow hears only when a run of
 * failures starts, goes on (at the policy's threshold and its doublings) and ends,
 * so an endpoint that is down costs Temporal a few signals, not one per attempt.
 *
 * It holds no policy: each decision is the `decideHealth` activity's, which applies
 * the policy the worker is configured with then and says when to look again (when
 * the span will have passed). Any signal of the run makes it look again at once, so
 * a worker restarted with a lower threshold disables at its next failures.
 * A re-enable (`reenabled`) starts a fresh run; a delete (`deleted`) ends it.
 *
 * Runs started by the earlier code (the policy in their input) replay their history
 * unchanged: `patched` is false while replaying what they recorded, and true at their
 * first live step (a signal or a timer), from which they decide the new way.
 */
export const webhookHealth: WebhookHealth = async (input) => {
  let failingSince = input.failingSince;
  let current = false;
  const upgraded = () => current || (current = patched(POLICY_WHEN_DECIDING));
  /** Signals heard since the run decides the new way: each one makes it look again. */
  let heard = 0;
  let restart = false;
  let ended = false;
  setHandler(failingSignal, ({ since }) => {
    failingSince = since;
    if (upgraded()) heard++;
  });
  setHandler(recoveredSignal, () => {
    failingSince = undefined;
    if (upgraded()) heard++;
  });
  setHandler(reenabledSignal, () => {
    upgraded();
    failingSince = undefined;
    restart = true;
  });
  setHandler(deletedSignal, () => {
    upgraded();
    ended = true;
  });
  upgraded();

  for (let check = 0; check < CHECKS_PER_RUN && !restart; check++) {
    if (ended) return;
    if (failingSince === undefined) {
      if (!(await condition(() => failingSince !== undefined || restart || ended, IDLE_MS))) return;
      continue;
    }
    const since = failingSince;
    if (upgraded()) {
      const seen = heard;
      const decision = await decideHealth(input.webhookId, since);
      if (decision.verdict === 'deleted') return;
      if (decision.verdict === 'not yet') await condition(() => heard !== seen || restart || ended, decision.checkInMs);
      else if (heard === seen) failingSince = undefined; // disabled, or the run ended: idle until the next one
      continue;
    }
    // The earlier code's steps, for the history a run recorded before the upgrade.
    const runChanged = () => failingSince !== since || current;
    const disableAfterMs = input.disableAfterMs ?? 0;
    const due = since + disableAfterMs - Date.now();
    if (due > 0 && (await condition(runChanged, due))) continue;
    if (upgraded()) continue;
    const verdict = await disableIfSustained(input.webhookId, since, input.disableAfterFailures ?? 0, disableAfterMs);
    if (verdict === 'not yet') await condition(runChanged, Math.min(disableAfterMs, LEGACY_RECHECK_MS));
    else if (!runChanged()) failingSince = undefined;
  }
  await continueAsNew<WebhookHealth>(current ? { webhookId: input.webhookId, failingSince } : { ...input, failingSince });
};
