import { duration } from '../src/config';
import { account, addWebhook, publish, verifyEvents, waitUntil } from './client';
import { settle } from './delivery-scenarios';
import { round, usageOver } from './processes';
import { startBenchReceiver } from './receivers';
import type { BenchSystem } from './system';

export interface BacklogOptions {
  events: number;
  /** Wait between attempts while the endpoint is down (the workers are restarted with it). */
  retryDelay: string;
  /** Bound on publishing plus every first attempt. */
  fillMs: number;
  /** How far publishing may run ahead of the first attempts. */
  ahead: number;
  drainMs: number;
}

/**
 * 6. Backlog: one endpoint down while up to M events wait on their retry timers.
 * Counts the open workflows, measures CPU and RSS over 10 s of waiting, then the
 * endpoint recovers and the time until every event is acknowledged is taken.
 * Publishing stops at M events or when the fill budget is spent, whichever is first.
 */
export async function backlog(sys: BenchSystem, opts: BacklogOptions) {
  await sys.restartWorkers({ SHIPHOOK_RETRY_DELAYS: Array(10).fill(opts.retryDelay).join(',') });
  const acct = await account(sys.origin, 'backlog');
  const receiver = await startBenchReceiver();
  receiver.failWith = 503;
  try {
    await addWebhook(sys.origin, acct.testKey, receiver.url);
    const t0 = performance.now();
    const publishUntil = t0 + opts.fillMs * 0.8; // the rest of the budget is for the first attempts to catch up
    const ids: string[] = [];
    let started = 0;
    // Publishing runs ahead of the first attempts by at most `opts.ahead` events, so
    // when the budget ends nearly every published event has failed once and waits.
    await Promise.all(Array.from({ length: 32 }, async () => {
      while (started < opts.events && performance.now() < publishUntil) {
        if (started - receiver.firstSeen.size >= opts.ahead) {
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        started++;
        ids.push(await publish(sys.origin, acct.userId));
      }
    }));
    const publishSeconds = (performance.now() - t0) / 1000;
    const firstAttempts = await waitUntil(() => ids.every((id) => receiver.firstSeen.has(id)), Math.max(0, t0 + opts.fillMs - performance.now()));
    const fillSeconds = (performance.now() - t0) / 1000;
    const open = await sys.runningDeliveries(acct.userId);
    const requestsBefore = receiver.requests;
    const waiting = await usageOver(sys.pids, 10_000);
    const retriesWhileMeasuring = receiver.requests - requestsBefore;

    const ackedBefore = receiver.acknowledged.size; // 0 unless the receiver is broken
    receiver.failWith = null;
    const r0 = performance.now();
    let firstAckSeconds: number | null = null;
    const drained = await waitUntil(() => {
      if (firstAckSeconds === null && receiver.acknowledged.size > ackedBefore) firstAckSeconds = (performance.now() - r0) / 1000;
      return ids.every((id) => receiver.acknowledged.has(id));
    }, opts.drainMs);
    const drainSeconds = (performance.now() - r0) / 1000;
    // The latest a retry can be due: the last first attempt plus the delay with its +20% jitter.
    // How long after that the last acknowledgement came is how far the engine fell behind its schedule
    // (at most; ≤ 0 means it kept up, the jitter having put the last retry earlier).
    const lastRetryDue = Math.max(...ids.map((id) => receiver.firstSeen.get(id) ?? 0)) + duration(opts.retryDelay) * 1.2;
    const lastAck = Math.max(...ids.map((id) => receiver.acknowledged.get(id) ?? 0));
    const settled = await settle(sys, 30_000, acct.userId);
    const verified = await verifyEvents(sys.origin, acct.testKey, ids, 1);
    return {
      target_events: opts.events,
      events: ids.length,
      retry_delay: opts.retryDelay,
      publish_per_second: round(ids.length / publishSeconds),
      every_first_attempt_made: firstAttempts,
      seconds_until_every_first_attempt: firstAttempts ? round(fillSeconds, 1) : null,
      open_workflows_while_waiting: open,
      while_waiting_10s: waiting,
      retry_requests_during_those_10s: retriesWhileMeasuring,
      acknowledged_before_recovery: ackedBefore,
      drained_within_budget: drained,
      // The first retries after recovery wait for their timers (up to retry_delay + 20% jitter).
      seconds_to_first_ack_after_recovery: firstAckSeconds === null ? null : round(firstAckSeconds, 1),
      seconds_to_drain_after_recovery: drained ? round(drainSeconds, 1) : null,
      seconds_after_last_retry_due: drained ? round((lastAck - lastRetryDue) / 1000, 1) : null,
      // Once retries are due they arrive spread by the schedule's jitter; this is how fast they were acknowledged then.
      acknowledged_per_second_while_draining: drained && firstAckSeconds !== null && drainSeconds > firstAckSeconds ? round(ids.length / (drainSeconds - firstAckSeconds)) : null,
      acknowledged_after_recovery: ids.filter((id) => receiver.acknowledged.has(id)).length,
      lost_events: ids.filter((id) => !receiver.acknowledged.has(id)).length,
      workflows_finished: settled,
      api_view: verified,
    };
  } finally {
    await receiver.close();
    await sys.restartWorkers({}); // back to the schedule the other scenarios use
  }
}
