import { replayAll, verifyEvents } from './client';
import { startCostMeter } from './cost';
import { lostOn, offer, replaySettleMs, settle, spread, steadyWindow, threeReceivers, WARMUP_SECONDS } from './delivery-scenarios';
import { round, usageOver } from './processes';
import type { BenchReceiver } from './receivers';
import type { BenchSystem } from './system';

type Load = { rate: number; seconds: number; waitMs: number };

/**
 * Attempt 2 comes 5 s after attempt 1 and attempt 3 5 min after attempt 2 (production
 * schedule, each ±20%): the first window's third attempts come due spread from ~4 min
 * after it started to ~6 min after it ended, densest 5 s + 5 min after its start.
 */
const THIRD_ATTEMPTS_CENTRE_MS = 5_000 + 5 * 60_000;
/**
 * After the first window's end, its last event's third attempt is due within this (5 s and
 * 5 min, +20% each); to a hanging endpoint two attempt timeouts later (each delay runs
 * from its attempt's end).
 */
const THIRD_ATTEMPTS_LAST_MS = 6_000 + 6 * 60_000;
/** The second window's own third attempts come due from this long after it started (5 s and 5 min, −20% each). */
const OWN_THIRD_ATTEMPTS_FIRST_MS = 4_000 + 4 * 60_000;
/** Room for the last third attempt to be made and recorded before the no-failure window starts. */
const QUIET_MARGIN_MS = 5_000;

export interface FailureOptions {
  rate: number;
  seconds: number;
  waitMs: number;
  /**
   * Also measure a window while the first window's 5-minute retries come due, then a
   * no-failure window once they are past, the second window's baseline (~8 min more).
   */
  secondWindow: boolean;
  settleMs: number;
  /** How the failing endpoint fails: answers 500, or never answers (each attempt ends at the attempt timeout). */
  failingEndpoint: '500' | 'hang';
  /** The engine's SHIPHOOK_ATTEMPT_TIMEOUT: how long an attempt to a hanging endpoint lasts. */
  attemptTimeoutMs: number;
}

/**
 * 4. Failure: steady offered load with one of three endpoints answering 500 throughout, on the
 * production retry schedule: latency on the two healthy receivers, first while the
 * failing URL's first attempts and 5-second retries run, then (full runs) while the
 * first window's 5-minute retries come due, and then without a failing endpoint: the
 * second window's baseline, measured a minute after it rather than ~8 minutes before
 * (the latency scenario), so that the machine's drift between the two does not enter
 * the ratio. Afterwards, as an operator does after an outage, what still retries is
 * replayed so it is delivered now.
 */
export async function failure(sys: BenchSystem, opts: FailureOptions) {
  const { acct, receivers } = await threeReceivers(sys, 'failure');
  const failing = receivers[2]!;
  const healthy = receivers.slice(0, 2);
  failing.failWith = opts.failingEndpoint === 'hang' ? 'hang' : 500;
  const load: Load = { rate: opts.rate, seconds: opts.seconds, waitMs: opts.waitMs };
  try {
    await offer(sys, acct.userId, opts.rate, WARMUP_SECONDS, new Map()); // not measured, as in the latency scenario
    const meter = await startCostMeter(sys, 'failure-first-window');
    const first = await steadyWindow(sys, acct.userId, load, healthy, failing);
    // The offered load and, for the failing URL, its first attempts and retries so far.
    const cost = await meter.stop(first.ids.length, spread(first.ids, 10));
    const whereSlowEventsWait = await first.slowest();

    let second: Record<string, unknown> | string = 'skipped in quick mode (the 5-minute retries come due ~5 min after the first window started)';
    let noFailureAfter: Record<string, unknown> | string = 'skipped in quick mode (it follows the second window)';
    const laterIds: string[] = [];
    if (opts.secondWindow) {
      // The second window is centred on the spread of the first window's third attempts. The
      // wait is idle time: it shows what the failing URL's waiting retries cost.
      const waitMs = Math.max(0, first.startedAt + THIRD_ATTEMPTS_CENTRE_MS - WARMUP_SECONDS * 1000 - (performance.timeOrigin + performance.now()));
      const waiting = await usageOver(sys.pids, waitMs);
      // Warm-up after the idle minutes, not measured, as before every other window: the
      // first events after a quiet spell are slower (connections the pools closed, JIT),
      // and the windows this one is compared with start warm.
      const warmup = new Map<string, number>();
      await offer(sys, acct.userId, opts.rate, WARMUP_SECONDS, warmup);
      laterIds.push(...warmup.keys());
      const before = requestsFor(failing, first.ids);
      const secondMeter = await startCostMeter(sys, 'failure-second-window');
      const w = await steadyWindow(sys, acct.userId, load, healthy, failing);
      // Of the requests to the failing receiver, those for the first window's events: their 5-minute retries.
      const retriesDue = requestsFor(failing, first.ids) - before;
      laterIds.push(...w.ids);
      second = {
        started_seconds_after_first_window: round((w.startedAt - first.startedAt) / 1000),
        ...w.stats,
        retries_of_first_window_events_during_window: retriesDue,
        idle_before_window: { seconds: round(waitMs / 1000), ...waiting },
        // Per event of this window: against the first window's cost, what those retries add.
        cost: await secondMeter.stop(w.ids.length, spread(w.ids, 10)),
        // Last: the requests above are counted before its reads take any time.
        where_slow_events_wait: await w.slowest(),
      };

      // The no-failure window: once the first window's third attempts are past (the second
      // window's own come due ~4 min after it started).
      const attemptsMs = opts.failingEndpoint === 'hang' ? 2 * opts.attemptTimeoutMs : 0;
      const quietAt = first.startedAt + opts.seconds * 1000 + THIRD_ATTEMPTS_LAST_MS + attemptsMs + QUIET_MARGIN_MS;
      noFailureAfter =
        quietAt + (WARMUP_SECONDS + opts.seconds) * 1000 > w.startedAt + OWN_THIRD_ATTEMPTS_FIRST_MS
          ? `not measured: with ${opts.seconds}-s windows it would overlap the second window's own 5-minute retries`
          : await noFailureWindow(sys, acct.userId, load, receivers, failing, quietAt, w.startedAt, laterIds);
    }

    failing.failWith = null;
    const replayed = await replayAll(sys.origin, acct.userId, 'retrying');
    const settled = await settle(sys, replaySettleMs(replayed, opts.settleMs), acct.userId);
    const ids = [...first.ids, ...laterIds];
    const verified = await verifyEvents(sys.origin, acct.testKey, ids, receivers.length);
    return {
      warmup_seconds_not_measured: WARMUP_SECONDS,
      ...first.stats,
      where_slow_events_wait: whereSlowEventsWait,
      while_earlier_retries_due: second,
      no_failure_after: noFailureAfter,
      replayed_after_recovery: replayed,
      lost_events: lostOn(receivers, ids),
      workflows_finished_after: settled,
      api_view_after_replay: verified,
      cost,
    };
  } finally {
    await Promise.all(receivers.map((r) => r.close()));
  }
}

/** Requests the receiver got for these events, retries included. */
const requestsFor = (receiver: BenchReceiver, ids: Iterable<string>) => {
  let n = 0;
  for (const id of ids) n += receiver.requestsById.get(id) ?? 0;
  return n;
};

/**
 * At `quietAt` (epoch ms) the failing endpoint recovers and the same load runs, warm-up
 * first, to three healthy URLs as in the latency scenario: the second window's baseline.
 * Its events' ids (warm-up too) are added to `ids`, to be verified with the others.
 */
async function noFailureWindow(sys: BenchSystem, userId: string, load: Load, receivers: BenchReceiver[], failing: BenchReceiver, quietAt: number, secondStartedAt: number, ids: string[]) {
  await new Promise((r) => setTimeout(r, Math.max(0, quietAt - (performance.timeOrigin + performance.now()))));
  failing.failWith = null;
  const requestsBefore = failing.requests;
  const warmup = new Map<string, number>(); // not measured, as before the other windows
  await offer(sys, userId, load.rate, WARMUP_SECONDS, warmup);
  const meter = await startCostMeter(sys, 'failure-no-failure-after');
  const baseline = await steadyWindow(sys, userId, load, receivers);
  const own = [...warmup.keys(), ...baseline.ids];
  // Requests to the recovered endpoint for earlier events: retries that fell in this window (0 expected).
  const earlierRetries = failing.requests - requestsBefore - requestsFor(failing, own);
  ids.push(...own);
  return {
    started_seconds_after_second_window: round((baseline.startedAt - secondStartedAt) / 1000),
    warmup_seconds_not_measured: WARMUP_SECONDS,
    ...baseline.stats,
    earlier_retries_during_window: earlierRetries,
    cost: await meter.stop(baseline.ids.length, spread(baseline.ids, 10)),
    where_slow_events_wait: await baseline.slowest(),
  };
}
