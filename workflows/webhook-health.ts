import { condition, continueAsNew, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { deletedSignal, failingSignal, reenabledSignal, recoveredSignal, type WebhookHealth } from '../src/engine/contract';

const { decideHealth } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1s', maximumInterval: '1 minute' },
});

/** Checks per run before continuing as new: keeps the history short. */
const CHECKS_PER_RUN = 200;
/** With nothing to watch for this long the workflow ends; the next run of failures starts it again. */
const IDLE_MS = 7 * 24 * 60 * 60 * 1000;

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
 */
export const webhookHealth: WebhookHealth = async (input) => {
  let failingSince = input.failingSince;
  /** Signals of the run of failures heard so far: each one makes the workflow look again. */
  let heard = 0;
  let restart = false;
  let ended = false;
  setHandler(failingSignal, ({ since }) => {
    failingSince = since;
    heard++;
  });
  setHandler(recoveredSignal, () => {
    failingSince = undefined;
    heard++;
  });
  setHandler(reenabledSignal, () => {
    failingSince = undefined;
    restart = true;
  });
  setHandler(deletedSignal, () => {
    ended = true;
  });

  for (let check = 0; check < CHECKS_PER_RUN && !restart; check++) {
    if (ended) return;
    if (failingSince === undefined) {
      if (!(await condition(() => failingSince !== undefined || restart || ended, IDLE_MS))) return;
      continue;
    }
    const seen = heard;
    const decision = await decideHealth(input.webhookId, failingSince);
    if (decision.verdict === 'deleted') return;
    if (decision.verdict === 'not yet') await condition(() => heard !== seen || restart || ended, decision.checkInMs);
    else if (heard === seen) failingSince = undefined; // disabled, or the run ended: idle until the next one
  }
  await continueAsNew<WebhookHealth>({ webhookId: input.webhookId, failingSince });
};
