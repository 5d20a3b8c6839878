import { replayAll, verifyEvents } from './client';
import { lostOn, offer, replaySettleMs, settle, threeReceivers } from './delivery-scenarios';
import { round, treeRssMb } from './processes';
import { percentiles } from './receivers';
import { type BenchSystem, benchDb } from './system';

export interface SaturationOptions {
  /** Offered events/s: more than the system takes. */
  rate: number;
  /** Seconds of publishing. */
  seconds: number;
  sampleMs: number;
  /** Bound on the wait, after publishing, until every first attempt is made and the outbox is empty. */
  drainMs: number;
  settleMs: number;
  /** The burst's measured end-to-end events/s, to compare the drain with. */
  burstRate?: number;
}

/** Attempt 2 is due 5 s (+20% jitter) after attempt 1 on the production schedule. */
const SECOND_ATTEMPT_LATEST_MS = 6_000;

interface Sample {
  at: number;
  published: number;
  outboxEvents: number;
  oldestUndispatchedSeconds: number;
  retriesWaiting: number;
  failingRetries: number;
  rssMb: Record<string, number>;
}

/**
 * Saturation: more events/s than the system takes, three webhooks of which one
 * answers 500 throughout, production retry schedule. Sampled every few seconds until
 * every event has been first-attempted on the healthy receivers and the outbox is
 * empty: first-attempt latency, outbox lag, retries waiting and made, RSS. Shows how
 * the system falls behind (and whether retries yield to first attempts), how fast it
 * drains once the load stops, and that nothing is lost or duplicated.
 */
export async function saturation(sys: BenchSystem, opts: SaturationOptions) {
  const { acct, receivers } = await threeReceivers(sys, 'saturation');
  const failing = receivers[2]!;
  const healthy = receivers.slice(0, 2);
  failing.failWith = 500;
  const db = await benchDb(sys);
  const now = () => performance.timeOrigin + performance.now();
  const sentAt = new Map<string, number>();
  const samples: Sample[] = [];
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
    const processes = { ...sys.pids, ...(sys.postgresPid ? { postgres: sys.postgresPid } : {}) };
    samples.push({
      at,
      published: sentAt.size,
      outboxEvents: outbox.rows[0]!.n,
      oldestUndispatchedSeconds: outbox.rows[0]!.age,
      retriesWaiting: retries.rows[0]!.n,
      failingRetries: retriesMade(),
      rssMb: Object.fromEntries(Object.entries(processes).map(([k, pid]) => [k, round(treeRssMb(pid))])),
    });
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
        const last = samples[samples.length - 1]!;
        if (publishEnd !== undefined && last.outboxEvents === 0 && [...sentAt.keys()].every(firstAttempted)) return true;
        if (now() > deadline) return false;
        await new Promise((r) => setTimeout(r, Math.max(0, tick + opts.sampleMs - now())));
      }
    })();
    sampling.catch(() => undefined); // awaited below; a failed query must not end the process meanwhile
    const { total, publishErrors } = await offer(sys, acct.userId, opts.rate, opts.seconds, sentAt);
    const end = now();
    publishEnd = end;
    deadline = end + opts.drainMs;
    // Whether the failing URL's retries waited while first attempts were behind: second attempts overdue now.
    const overdueRetries = [...failing.firstSeen].filter(([id, at]) => at < end - SECOND_ATTEMPT_LATEST_MS && (failing.requestsById.get(id) ?? 0) < 2).length;
    const retriesAtEnd = retriesMade();
    const firstAttemptsToFailingAtEnd = failing.firstSeen.size;
    const drained = await sampling;
    const ids = [...sentAt.keys()];

    // When each event was first attempted on every healthy URL, and its first-attempt latencies.
    const firstAttemptAt = new Map<string, number>();
    const sightings: { at: number; latency: number }[] = [];
    for (const id of ids) {
      const seen = healthy.map((r) => r.firstSeen.get(id));
      for (const at of seen) if (at !== undefined) sightings.push({ at, latency: at - sentAt.get(id)! });
      if (seen.every((at) => at !== undefined)) firstAttemptAt.set(id, Math.max(...(seen as number[])));
    }
    const lastFirstAttempt = Math.max(end, ...firstAttemptAt.values());
    const behindAtEnd = [...firstAttemptAt.values()].filter((at) => at > end).length;
    const drainSeconds = (lastFirstAttempt - end) / 1000;
    const drainRate = behindAtEnd > 0 && drainSeconds > 0 ? round(behindAtEnd / drainSeconds) : null;
    const outboxEmptyAt = samples.find((s) => s.at >= end && s.outboxEvents === 0)?.at;
    const retriesAfter = retriesMade() - retriesAtEnd;
    const afterSeconds = Math.max(drainSeconds, (samples[samples.length - 1]!.at - end) / 1000);

    const series = samples.map((s, i) => {
      const from = i === 0 ? -Infinity : samples[i - 1]!.at;
      return {
        t_s: round((s.at - t0) / 1000),
        published: s.published,
        first_attempt_latency_ms: percentiles(sightings.filter((x) => x.at > from && x.at <= s.at).map((x) => x.latency)),
        outbox: { events: s.outboxEvents, oldest_seconds: round(s.oldestUndispatchedSeconds) },
        retries_waiting: s.retriesWaiting,
        retry_attempts: s.failingRetries - (i === 0 ? 0 : samples[i - 1]!.failingRetries),
        rss_mb: s.rssMb,
      };
    });
    const peakRss: Record<string, number> = {};
    for (const s of samples) for (const [k, v] of Object.entries(s.rssMb)) peakRss[k] = Math.max(peakRss[k] ?? 0, v);

    failing.failWith = null;
    const replayed = await replayAll(sys.origin, acct.userId, 'retrying');
    const settled = await settle(sys, replaySettleMs(replayed, opts.settleMs), acct.userId);
    const verified = await verifyEvents(sys.origin, acct.testKey, ids, receivers.length);
    const publishSeconds = (end - t0) / 1000;
    return {
      offered_events_per_second: opts.rate,
      seconds: opts.seconds,
      sample_every_seconds: opts.sampleMs / 1000,
      events_offered: total,
      events_published: ids.length,
      publish_errors: publishErrors,
      achieved_publish_per_second: round(ids.length / publishSeconds),
      publish_seconds: round(publishSeconds),
      every_first_attempt_and_outbox_empty_within_wait: drained,
      events_not_yet_first_attempted_when_publishing_ended: behindAtEnd,
      outbox_empty_seconds_after_publishing: outboxEmptyAt === undefined ? null : round((outboxEmptyAt - end) / 1000),
      // Events first-attempted per second (on every healthy URL) from the end of publishing to the last first attempt.
      drain_events_per_second: drainRate,
      burst_events_per_second_end_to_end: opts.burstRate ?? null,
      drain_to_burst_rate: drainRate !== null && opts.burstRate ? round(drainRate / opts.burstRate, 2) : null,
      peak_rss_mb: peakRss,
      peak_outbox: {
        events: Math.max(0, ...samples.map((s) => s.outboxEvents)),
        oldest_seconds: round(Math.max(0, ...samples.map((s) => s.oldestUndispatchedSeconds))),
      },
      peak_retries_waiting: Math.max(0, ...samples.map((s) => s.retriesWaiting)),
      first_attempt_latency_ms: {
        during_overload: percentiles(sightings.filter((x) => x.at <= end).map((x) => x.latency)),
        after: percentiles(sightings.filter((x) => x.at > end).map((x) => x.latency)),
      },
      retries: {
        first_attempts_to_failing_url_during_overload: firstAttemptsToFailingAtEnd,
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
      api_view_after_replay: verified,
      series,
    };
  } finally {
    await db.end();
    await Promise.all(receivers.map((r) => r.close()));
  }
}
