import { account, addWebhook, verifyEvents, waitUntil } from '../client';
import { startCostMeter } from '../cost';
import { offer, settle } from '../delivery-scenarios';
import { round } from '../processes';
import { startBenchReceiver } from '../receivers';
import { startStorageMeter } from '../storage';
import type { BenchSystem } from '../system';
import type { LabScenario } from './index';

/** `rate`: events/s while publishing; `waitMs` bounds each wait, `windowMs` the measured window. */
type RetryOptions = { events: number; rate: number; waitMs: number; windowMs: number; settleMs: number };

/** Eleven retries 2 s apart (12 attempts): later attempts come often enough to be measured in seconds. */
const RETRY_DELAYS = Array(11).fill('2s').join(',');
/** The window: from attempt 2 of every event on, until the receiver got this many more attempts per event. */
const WINDOW_ATTEMPTS_PER_EVENT = 5;

/**
 * What one later attempt to a failing endpoint costs: one account, one webhook that
 * always answers 500, N events. Once every event's first two attempts are over, the CPU
 * of every process over a window of retries is divided by the attempts the receiver got
 * in it. A later attempt is the one `retryDelivery` activity, retried by the Temporal
 * server (nextRetryDelay) on the retries task queue. Then the endpoint recovers and
 * every event must end completed.
 */
export const retry: LabScenario = {
  about: 'one endpoint that always fails, eleven 2-s retries: CPU and storage per later attempt',
  flags: { 'retry-events': 'retry: events whose later attempts are measured (default 300; --quick 60)' },
  run(sys, { quick, number }) {
    const waitMs = quick ? 30_000 : 60_000;
    return laterAttempts(sys, { events: number('retry-events', quick ? 60 : 300), rate: quick ? 20 : 50, waitMs, windowMs: waitMs, settleMs: 60_000 });
  },
};

async function laterAttempts(sys: BenchSystem, opts: RetryOptions) {
  await sys.restartWorkers({ SHIPHOOK_RETRY_DELAYS: RETRY_DELAYS });
  const receiver = await startBenchReceiver();
  receiver.failWith = 500;
  try {
    const acct = await account(sys.origin, 'retry');
    await addWebhook(sys.origin, acct.testKey, receiver.url);
    const sentAt = new Map<string, number>();
    const { publishErrors } = await offer(sys, acct.userId, opts.rate, opts.events / opts.rate, sentAt);
    const ids = [...sentAt.keys()];
    const n = ids.length;
    const firstAttempts = await waitUntil(() => ids.every((id) => receiver.firstSeen.has(id)), opts.waitMs);
    const secondAttempts = await waitUntil(() => receiver.requests >= 2 * n, opts.waitMs);

    const [meter, storage] = await Promise.all([startCostMeter(sys), startStorageMeter(sys)]);
    const requestsBefore = receiver.requests;
    const t0 = performance.now();
    const windowFilled = await waitUntil(() => receiver.requests >= (2 + WINDOW_ATTEMPTS_PER_EVENT) * n, opts.windowMs);
    const attempts = receiver.requests - requestsBefore;
    const windowSeconds = (performance.now() - t0) / 1000;
    const { cpu_ms_per_event: cpuPerAttempt, sql_per_event: sqlPerAttempt, ...history } = await meter.stop(Math.max(1, attempts), ids.slice(0, 1));
    const storagePerAttempt = await storage.stop(attempts);

    receiver.failWith = null;
    const requestsAtRecovery = receiver.requests;
    const acknowledged = await waitUntil(() => ids.every((id) => receiver.acknowledged.has(id)), opts.waitMs);
    const settled = await settle(sys, opts.settleMs, acct.userId);
    const verified = await verifyEvents(sys.origin, acct.testKey, ids, 1);
    return {
      events: n,
      publish_errors: publishErrors,
      retry_delays: RETRY_DELAYS,
      every_first_attempt_within_wait: firstAttempts,
      every_second_attempt_within_wait: secondAttempts,
      window: {
        target_attempts: WINDOW_ATTEMPTS_PER_EVENT * n,
        attempts,
        reached_target: windowFilled,
        seconds: round(windowSeconds, 1),
        later_attempts_per_second: round(attempts / windowSeconds),
      },
      // CPU over the window divided by the attempts in it (per process; system_total without the bench).
      cpu_ms_per_later_attempt: cpuPerAttempt,
      sql_per_later_attempt: sqlPerAttempt,
      storage_per_failed_attempt: storagePerAttempt,
      ...history,
      attempts_per_event_before_recovery: round(requestsAtRecovery / n, 2),
      all_acknowledged_after_recovery: acknowledged,
      lost_events: ids.filter((id) => !receiver.acknowledged.has(id)).length,
      workflows_finished_after: settled,
      api_view: verified,
    };
  } finally {
    await receiver.close();
    await sys.restartWorkers({}); // back to the production schedule the other scenarios use
  }
}
