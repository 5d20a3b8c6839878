import { replayAll, verifyEvents } from '../client';
import { lostOn, offer, replaySettleMs, settle, threeReceivers } from '../delivery-scenarios';
import { round } from '../processes';
import { percentiles } from '../receivers';
import { type BenchSystem, benchDb } from '../system';
import type { LabScenario } from './index';

/**
 * `rate`: events/s offered, more than the system takes, for `seconds`; `drainMs` bounds the
 * wait for every first attempt and an empty outbox afterwards; `burstRate`: the burst's
 * end-to-end events/s, to compare the drain with.
 */
type SaturationOptions = { rate: number; seconds: number; sampleMs: number; drainMs: number; settleMs: number; burstRate?: number };

/** Attempt 2 is due 5 s (+20% jitter) after attempt 1 on the production schedule. */
const SECOND_ATTEMPT_LATEST_MS = 6_000;

/**
 * Saturation, for the capacity model: more events/s than the system takes, three webhooks
 * of which one answers 500 throughout, production retry schedule. Sampled every few
 * seconds until every event has been first-attempted on the healthy receivers and the
 * outbox is empty. Shows how the system falls behind (the outbox absorbs what it cannot
 * start; retries yield to first attempts), how fast it drains once the load stops, and
 * that nothing is lost.
 */
export const saturation: LabScenario = {
  about: 'more events/s than the system takes, 1 of 3 endpoints failing: outbox, drain, whether retries yield',
  flags: { 'saturation-rate': "saturation: events/s offered (default: twice the burst's end-to-end rate)", 'saturation-seconds': 'saturation: seconds of publishing (default 60; --quick 15)' },
  run(sys, { quick, number, results }) {
    const burst = results.burst?.events_per_second_end_to_end;
    const burstRate = typeof burst === 'number' ? burst : undefined;
    return overload(sys, {
      rate: number('saturation-rate', burstRate ? round(2 * burstRate) : 100),
      seconds: number('saturation-seconds', quick ? 15 : 60),
      sampleMs: quick ? 2000 : 5000,
      drainMs: quick ? 120_000 : 360_000,
      settleMs: quick ? 60_000 : 180_000,
      burstRate,
    });
  },
};

async function overload(sys: BenchSystem, opts: SaturationOptions) {
  const { acct, receivers } = await threeReceivers(sys, 'saturation');
  const failing = receivers[2]!;
  const healthy = receivers.slice(0, 2);
  failing.failWith = 500;
  const db = await benchDb(sys);
  const now = () => performance.timeOrigin + performance.now();
  const sentAt = new Map<string, number>();
  const samples: { at: number; outbox: number; oldestSeconds: number; retriesWaiting: number }[] = [];
  const retriesMade = () => failing.requests - failing.firstSeen.size;
  const sample = async () => {
    const at = now();
    const [outbox, retries] = await Promise.all([
      db.query<{ n: number; age: number }>(
        `select count(*)::int as n, coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as age
         from events where dispatched_at is null and dispatch_failed_at is null`,
      ),
      db.query<{ n: number }>(`select count(*)::int as n from event_deliveries where state = 'pending' and attempts > 0`),
    ]);
    samples.push({ at, outbox: outbox.rows[0]!.n, oldestSeconds: outbox.rows[0]!.age, retriesWaiting: retries.rows[0]!.n });
  };
  const firstAttempted = (id: string) => healthy.every((r) => r.firstSeen.has(id));

  try {
    const t0 = now();
    let publishEnd: number | undefined;
    let deadline = Infinity;
    const sampling = (async () => {
      for (;;) {
        const tick = now();
        await sample();
        if (publishEnd !== undefined && samples[samples.length - 1]!.outbox === 0 && [...sentAt.keys()].every(firstAttempted)) return true;
        if (now() > deadline) return false;
        await new Promise((r) => setTimeout(r, Math.max(0, tick + opts.sampleMs - now())));
      }
    })();
    sampling.catch(() => undefined); // awaited below; a failed query must not end the process meanwhile
    const { publishErrors } = await offer(sys, acct.userId, opts.rate, opts.seconds, sentAt);
    const end = now();
    publishEnd = end;
    deadline = end + opts.drainMs;
    // Whether the failing URL's retries waited while first attempts were behind: second attempts overdue now.
    const overdueRetries = [...failing.firstSeen].filter(([id, at]) => at < end - SECOND_ATTEMPT_LATEST_MS && (failing.requestsById.get(id) ?? 0) < 2).length;
    const retriesAtEnd = retriesMade();
    const drained = await sampling;
    const ids = [...sentAt.keys()];

    // When each event was first attempted on every healthy URL, and its first-attempt latencies.
    const firstAttemptAt: number[] = [];
    const sightings: { at: number; latency: number }[] = [];
    for (const id of ids) {
      const seen = healthy.map((r) => r.firstSeen.get(id));
      for (const at of seen) if (at !== undefined) sightings.push({ at, latency: at - sentAt.get(id)! });
      if (seen.every((at) => at !== undefined)) firstAttemptAt.push(Math.max(...(seen as number[])));
    }
    const behindAtEnd = firstAttemptAt.filter((at) => at > end).length;
    const drainSeconds = (Math.max(end, ...firstAttemptAt) - end) / 1000;
    const drainRate = behindAtEnd > 0 && drainSeconds > 0 ? round(behindAtEnd / drainSeconds) : null;
    const outboxEmptyAt = samples.find((s) => s.at >= end && s.outbox === 0)?.at;
    const retriesAfter = retriesMade() - retriesAtEnd;
    const afterSeconds = Math.max(drainSeconds, (samples[samples.length - 1]!.at - end) / 1000);
    const publishSeconds = (end - t0) / 1000;

    failing.failWith = null;
    const replayed = await replayAll(sys.origin, acct.userId, 'retrying');
    const settled = await settle(sys, replaySettleMs(replayed, opts.settleMs), acct.userId);
    return {
      offered_events_per_second: opts.rate,
      seconds: opts.seconds,
      events_published: ids.length,
      publish_errors: publishErrors,
      achieved_publish_per_second: round(ids.length / publishSeconds),
      every_first_attempt_and_outbox_empty_within_wait: drained,
      events_not_yet_first_attempted_when_publishing_ended: behindAtEnd,
      outbox_empty_seconds_after_publishing: outboxEmptyAt === undefined ? null : round((outboxEmptyAt - end) / 1000),
      // Events first-attempted per second (on every healthy URL) from the end of publishing to the last first attempt.
      drain_events_per_second: drainRate,
      drain_to_burst_rate: drainRate !== null && opts.burstRate ? round(drainRate / opts.burstRate, 2) : null,
      peak_outbox: { events: Math.max(0, ...samples.map((s) => s.outbox)), oldest_seconds: round(Math.max(0, ...samples.map((s) => s.oldestSeconds))) },
      peak_retries_waiting: Math.max(0, ...samples.map((s) => s.retriesWaiting)),
      first_attempt_latency_ms: {
        during_overload: percentiles(sightings.filter((x) => x.at <= end).map((x) => x.latency)),
        after: percentiles(sightings.filter((x) => x.at > end).map((x) => x.latency)),
      },
      retries: {
        attempts_per_second_during_overload: round(retriesAtEnd / publishSeconds),
        attempts_per_second_after: afterSeconds > 0 ? round(retriesAfter / afterSeconds) : null,
        // Failing URLs whose attempt 2 was over 6 s late (5 s + jitter) when publishing ended.
        second_attempts_overdue_when_publishing_ended: overdueRetries,
        yielded: afterSeconds > 0 ? retriesAtEnd / publishSeconds < retriesAfter / afterSeconds : null,
      },
      replayed_after_recovery: replayed,
      lost_events: lostOn(healthy, ids),
      duplicate_requests: healthy.reduce((s, r) => s + r.requests - r.firstSeen.size, 0),
      workflows_finished_after: settled,
      // Read back after the replay.
      api_view: await verifyEvents(sys.origin, acct.testKey, ids, receivers.length),
      // Every few seconds: outbox (events not yet started, the oldest's age) and retries waiting.
      series: samples.map((s) => ({ t_s: round((s.at - t0) / 1000), outbox: s.outbox, oldest_s: round(s.oldestSeconds), retries_waiting: s.retriesWaiting })),
    };
  } finally {
    await db.end();
    await Promise.all(receivers.map((r) => r.close()));
  }
}
