import type { Config } from '../src/config';
import type { Db } from '../src/db/database';
import type { TargetOutcome } from '../src/engine/contract';
import { deliveryMetrics } from '../src/metrics/delivery';
import { disableIfSustained, disableWebhook, type FailureRun, type HealthVerdict, recordFailure, recordSuccess } from '../src/webhooks/webhooks';

/**
 * A webhook's health after its delivery attempts: failures are counted in the webhook
 * row (one atomic UPDATE each), and the webhook's long-lived health workflow
 * (workflows/webhook-health.ts) hears only when a run of failures starts, goes on
 * (rarely) and ends; it calls back `disableIfSustained` when the run may have lasted
 * long enough. A 410 Gone disables the webhook at once.
 */

/** How activities signal a webhook's health workflow (the engine sends it, starting the workflow if need be). */
export interface HealthSignals {
  failing(webhookId: string, since: Date): Promise<void>;
  recovered(webhookId: string): Promise<void>;
}

export interface HealthDeps {
  config: Config;
  db: Db;
  health: HealthSignals;
}

/**
 * What an attempt's outcome means for its webhook's health: the run of failures
 * (counted here unless recording the attempt counted it: `counted`), its end, a 410.
 * `wasFailing`: the webhook was in a run of failures when the attempt read it.
 */
export function healthFollowUp({ config, db, health }: HealthDeps) {
  return async (outcome: TargetOutcome, wasFailing: boolean, counted: Map<string, FailureRun>): Promise<void> => {
    const { webhookId } = outcome;
    if (outcome.outcome === 'delivered') {
      if (wasFailing && (await recordSuccess(db, webhookId))) await health.recovered(webhookId);
    } else if (outcome.outcome === 'retry' || outcome.outcome === 'failed') {
      const run = counted.get(webhookId) ?? (await recordFailure(db, webhookId, new Date()));
      if (run && repeatsHealthSignal(run.consecutiveFailures, config.disableAfterFailures)) {
        await health.failing(webhookId, run.failingSince);
      }
    } else if (outcome.outcome === 'stopped' && outcome.gone) {
      if (await disableWebhook(db, webhookId, new Date())) deliveryMetrics.webhookDisabled('gone');
    }
  };
}

/**
 * Whether this failure of a run (1-based) tells the health workflow: the first starts
 * the watch; the threshold's failure and every doubling after it (20, 40, 80, …)
 * repeat it, which makes up for a signal lost while Temporal was unreachable at a
 * cost that grows with the log of the run, not with every `threshold` failures.
 */
export function repeatsHealthSignal(consecutiveFailures: number, threshold: number): boolean {
  if (consecutiveFailures === 1) return true;
  if (consecutiveFailures < threshold || consecutiveFailures % threshold !== 0) return false;
  const multiple = consecutiveFailures / threshold;
  return (multiple & (multiple - 1)) === 0; // a power of two
}

export function createHealthActivities({ db }: { db: Db }) {
  return {
    /** Called by the health workflow when a run of failures may have lasted long enough. */
    async disableIfSustained(webhookId: string, since: number, minFailures: number, minSpanMs: number): Promise<HealthVerdict> {
      const verdict = await disableIfSustained(db, webhookId, new Date(since), minFailures, minSpanMs, new Date());
      if (verdict === 'disabled') deliveryMetrics.webhookDisabled('failing');
      return verdict;
    },
  };
}
