import type { Config } from '../src/config';
import type { Db } from '../src/db/database';
import type { HealthSignals, TargetOutcome } from '../src/engine/contract';
import { deliveryMetrics } from '../src/metrics/delivery';
import { hasPrefix } from '../src/ids';
import { giveUpDeliveriesTo } from '../src/events/deliveries';
import { log } from '../src/log';
import { errorText } from '../src/errors/error-text';
import { policyView } from '../src/webhooks/health-view';
import type { DisablePolicy } from '../src/webhooks/tables';
import { type FailureRun, type HealthDecision, recordFailure } from '../src/webhooks/health';
import { disableGoneWebhookReported, disableIfSustainedReported, recordRecovery, reportFailing } from '../src/operational-webhooks/webhook-changes';

/**
 * A webhook's health after its delivery attempts: failures are counted in the webhook
 * row (one atomic UPDATE each), and the webhook's long-lived health workflow
 * (workflows/webhook-health.ts) hears only when a run of failures starts, goes on
 * (rarely) and ends; it calls back `decideHealth` when the run may have lasted
 * long enough, which applies the policy this worker is configured with now. A 410
 * Gone disables the webhook at once. Each change of state an operator cares about
 * is one info line (ids only).
 */

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
    // A listener's failures show on its developer's terminal; it lives as long as its CLI, so it is never disabled.
    if (hasPrefix(webhookId, 'lst')) return;
    if (outcome.outcome === 'delivered') {
      if (wasFailing && (await recordRecovery(db, webhookId))) {
        log.info('webhook recovered', { webhook_id: webhookId });
        await health.recovered(webhookId);
      }
    } else if (outcome.outcome === 'retry' || outcome.outcome === 'failed') {
      const run = counted.get(webhookId) ?? (await recordFailure(db, webhookId, new Date()));
      if (run?.consecutiveFailures === 1) {
        log.info('webhook failing', { webhook_id: webhookId, response_code: outcome.responseCode });
        await reportFailing(db, webhookId, run.failingSince);
      }
      if (run && repeatsHealthSignal(run.consecutiveFailures, config.disableAfterFailures)) {
        await health.failing(webhookId, run.failingSince);
      }
    } else if (outcome.outcome === 'stopped' && outcome.gone) {
      if (await disableGoneWebhookReported(db, webhookId, new Date())) {
        deliveryMetrics.webhookDisabled('gone');
        log.info('webhook disabled', { webhook_id: webhookId, reason: 'endpoint_gone', events_failed: await giveUp(db, webhookId) });
      }
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

/** The disable policy this worker is configured with (SHIPHOOK_DISABLE_AFTER_FAILURES, SHIPHOOK_DISABLE_AFTER). */
export const currentPolicy = (config: Config): DisablePolicy => ({ failures: config.disableAfterFailures, afterMs: config.disableAfterMs });

export function createHealthActivities({ config, db }: { config: Config; db: Db }) {
  /**
   * Called by the health workflow when a run of failures may have lasted long enough:
   * decides under the policy configured now, so a changed setting applies to the runs
   * already watched once the workers restart with it.
   */
  async function decideHealth(webhookId: string, since: number): Promise<HealthDecision> {
    const policy = currentPolicy(config);
    const decision = await disableIfSustainedReported(db, webhookId, new Date(since), policy, new Date());
    if (decision.verdict === 'disabled') {
      deliveryMetrics.webhookDisabled('failing');
      log.info('webhook disabled', { webhook_id: webhookId, reason: 'sustained_failures', policy: policyView(policy), events_failed: await giveUp(db, webhookId) });
    }
    return decision;
  }
  return { decideHealth };
}

/**
 * Its deliveries still pending give up now, their events final at once (events/deliveries.ts);
 * returns how many events that failed. Should it fail, each is given up by its own run's
 * next attempt, as the disable is done: logged, not retried.
 */
async function giveUp(db: Db, webhookId: string): Promise<number> {
  try {
    const failed = await giveUpDeliveriesTo(db, webhookId);
    deliveryMetrics.eventFinished('failed', failed);
    return failed;
  } catch (err) {
    log.warn('could not give up the deliveries of a disabled webhook; their next attempts will', { webhook_id: webhookId, error: errorText(err) });
    return 0;
  }
}
