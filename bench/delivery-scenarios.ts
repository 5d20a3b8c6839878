import { Agent, request } from 'undici';
import { deliveryBody } from '../src/engine/signed-request';
import { account, addWebhook, EVENT_RESULT, pool, publish, verifyEvents, waitUntil } from './client';
import { startCostMeter } from './cost';
import { round } from './processes';
import { BLOCK_MS, keepBlocks, type LatencyBlocks } from './p99-interval';
import { type BenchReceiver, percentiles, startBenchReceiver } from './receivers';
import { slowestBreakdown } from './slowest';
import type { BenchSystem } from './system';

export async function threeReceivers(sys: BenchSystem, name: string) {
  const acct = await account(sys.origin, name);
  const receivers = await Promise.all([startBenchReceiver(), startBenchReceiver(), startBenchReceiver()]);
  for (const r of receivers) await addWebhook(sys.origin, acct.testKey, r.url);
  return { acct, receivers };
}

/** Events that some of these receivers never acknowledged. */
export const lostOn = (receivers: BenchReceiver[], ids: string[]) => ids.filter((id) => receivers.some((r) => !r.acknowledged.has(id))).length;

/** 1. Burst: N events as fast as the operator API accepts them (32 in flight), 3 webhooks each. */
export async function burst(sys: BenchSystem, n: number, waitMs: number) {
  const { acct, receivers } = await threeReceivers(sys, 'burst');
  const meter = await startCostMeter(sys, 'burst');
  const t0 = performance.now();
  const ids: string[] = [];
  await pool(n, 32, async () => { ids.push(await publish(sys.origin, acct.userId)); });
  const publishSeconds = (performance.now() - t0) / 1000;
  const done = await waitUntil(() => receivers.every((r) => r.acknowledged.size >= n), waitMs);
  const allSeconds = (performance.now() - t0) / 1000;
  // The last attempts record their outcome after the receiver answered: wait for the runs to end.
  const settled = await settle(sys, 30_000, acct.userId);
  const cost = await meter.stop(n, spread(ids, 25));
  const verified = await verifyEvents(sys.origin, acct.testKey, ids, 3);
  await Promise.all(receivers.map((r) => r.close()));
  const acked = Math.min(...receivers.map((r) => ids.filter((id) => r.acknowledged.has(id)).length));
  return {
    events: n,
    webhooks: 3,
    publish_per_second: round(n / publishSeconds),
    all_acknowledged: done,
    seconds_until_all_acknowledged: done ? round(allSeconds, 2) : null,
    events_per_second_end_to_end: round(acked / allSeconds),
    deliveries_per_second: round(receivers.reduce((s, r) => s + r.acknowledged.size, 0) / allSeconds),
    not_acknowledged_by_some_receiver: n - acked,
    lost_events: lostOn(receivers, ids),
    duplicate_requests: receivers.reduce((s, r) => s + r.requests, 0) - 3 * n,
    workflows_finished: settled,
    // GET /v2/events/:id for every event: status and pending/completed URLs as the API reports them.
    api_view: verified,
    // Publishing, delivering and settling, divided by the events.
    cost,
  };
}

export const WARMUP_SECONDS = 3;

/** Publishes at a steady rate for `seconds`, recording each event's send time (epoch ms). */
export async function offer(sys: BenchSystem, userId: string, rate: number, seconds: number, sentAt: Map<string, number>) {
  const total = Math.round(rate * seconds);
  const t0 = performance.now();
  const inflight = new Set<Promise<void>>();
  let publishErrors = 0;
  for (let i = 0; i < total; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (inflight.size >= 256) await Promise.race(inflight); // never more than 256 open publishes
    const started = performance.timeOrigin + performance.now();
    const p: Promise<void> = publish(sys.origin, userId).then((id) => void sentAt.set(id, started), () => void publishErrors++).finally(() => inflight.delete(p));
    inflight.add(p);
  }
  await Promise.all(inflight);
  return { total, publishErrors };
}

/**
 * One measured window of steady offered load: publishes at `rate` for `seconds`, then
 * waits (bounded) until the healthy receivers have seen every event. Latency runs from
 * the publisher's send time to each healthy receiver's first sight of the event id.
 */
export async function steadyWindow(sys: BenchSystem, userId: string, load: { rate: number; seconds: number; waitMs: number }, healthy: BenchReceiver[], failing?: BenchReceiver) {
  const sentAt = new Map<string, number>();
  const failingBefore = failing?.requests ?? 0;
  const startedAt = performance.timeOrigin + performance.now();
  const { total, publishErrors } = await offer(sys, userId, load.rate, load.seconds, sentAt);
  const publishSeconds = (performance.timeOrigin + performance.now() - startedAt) / 1000;
  const ids = [...sentAt.keys()];
  const allReceived = await waitUntil(() => healthy.every((r) => ids.every((id) => r.firstSeen.has(id))), load.waitMs);
  const samples: number[] = [];
  // By the 10-s slice of the window in which the event was published: where the slow ones fall.
  const bySlice: number[][] = [];
  // By block of publish time: how sure the window's p99 is (bench/p99-interval.ts).
  const blocks: LatencyBlocks = [];
  // A publish that lands just after the window's end joins its last block rather than making a tiny one.
  const lastBlock = Math.max(0, Math.ceil((load.seconds * 1000) / BLOCK_MS) - 1);
  // Each event's latest healthy receiver: what the breakdown of the slowest events follows.
  const eventLatency = new Map<string, { sentAt: number; seenAt: number }>();
  for (const r of healthy) {
    for (const id of ids) {
      const at = r.firstSeen.get(id);
      if (at === undefined) continue;
      const sent = sentAt.get(id)!;
      samples.push(at - sent);
      (bySlice[Math.floor((sent - startedAt) / 10_000)] ??= []).push(at - sent);
      (blocks[Math.min(lastBlock, Math.floor((sent - startedAt) / BLOCK_MS))] ??= []).push(at - sent);
      if (at > (eventLatency.get(id)?.seenAt ?? 0)) eventLatency.set(id, { sentAt: sent, seenAt: at });
    }
  }
  const latencyMs = percentiles(samples);
  keepBlocks(latencyMs, blocks);
  return {
    ids,
    /** Epoch ms. */
    startedAt,
    stats: {
      offered_events_per_second: load.rate,
      seconds: load.seconds,
      events: total,
      achieved_publish_per_second: round(ids.length / publishSeconds),
      publish_errors: publishErrors,
      healthy_receivers: healthy.length,
      latency_ms: latencyMs,
      latency_ms_by_10s: Array.from(bySlice, (slice) => {
        if (!slice) return null;
        const { p50, p99, max } = percentiles(slice);
        return { p50, p99, max };
      }),
      all_received_within_wait: allReceived,
      not_received_within_wait: ids.length * healthy.length - samples.length,
      ...(failing ? { requests_to_failing_receiver: failing.requests - failingBefore } : {}),
    },
    /** Where the window's slowest events waited: read after the cost meter stopped, so its reads are not counted. */
    slowest: () => slowestBreakdown(sys, eventLatency, startedAt),
  };
}

/** ~`n` ids spread over the list: the events whose workflow histories the cost meter reads. */
export const spread = (ids: string[], n: number) => ids.filter((_, i) => i % Math.ceil(ids.length / n) === 0);

/** 2. Steady offered load, three healthy receivers: latency, cost, and every event completed. */
export async function latency(sys: BenchSystem, load: { rate: number; seconds: number; waitMs: number }) {
  const { acct, receivers } = await threeReceivers(sys, 'latency');
  try {
    // Warm-up at the same rate, not measured: the first second after a start is slower
    // (workflow contexts, JIT, new connections to the database and the receivers).
    await offer(sys, acct.userId, load.rate, WARMUP_SECONDS, new Map());
    const meter = await startCostMeter(sys, 'latency');
    const window = await steadyWindow(sys, acct.userId, load, receivers);
    const cost = await meter.stop(window.ids.length, spread(window.ids, 10));
    const whereSlowEventsWait = await window.slowest();
    const settled = await settle(sys, 60_000, acct.userId);
    const verified = await verifyEvents(sys.origin, acct.testKey, window.ids, receivers.length);
    return {
      warmup_seconds_not_measured: WARMUP_SECONDS,
      ...window.stats,
      where_slow_events_wait: whereSlowEventsWait,
      lost_events: lostOn(receivers, window.ids),
      workflows_finished_after: settled,
      api_view: verified,
      cost,
    };
  } finally {
    await Promise.all(receivers.map((r) => r.close()));
  }
}

/** 5. The HTTP ceiling: the same receiver code hit directly by undici from one process, same body. */
export async function ceiling(n: number) {
  const receivers = await Promise.all([startBenchReceiver(), startBenchReceiver(), startBenchReceiver()]);
  const agent = new Agent({ connections: 64, keepAliveTimeout: 30_000 });
  const body = deliveryBody({ id: 'evt_x', object: 'Event', mode: 'test', description: 'tracker.updated', previous_attributes: { status: 'pre_transit' }, result: EVENT_RESULT, status: 'in_queue', pending_urls: receivers.map((r) => r.url), completed_urls: [] });
  const t0 = performance.now();
  await pool(3 * n, 64, async (i) => {
    const r = receivers[i % 3]!;
    const res = await request(r.url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'webhook-id': `evt_${i}` }, dispatcher: agent });
    await res.body.dump();
  });
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(receivers.map((r) => r.close()));
  await agent.close();
  return { deliveries: 3 * n, body_bytes: Buffer.byteLength(body), concurrency: 64, deliveries_per_second: round((3 * n) / seconds) };
}

/**
 * How long to wait for `replayed` events to finish after an operator replay: the
 * bound grows with the replay (at least ~16 replayed events/s), so a large replay is
 * not reported as unfinished only because the wait was sized for a small one.
 */
export const replaySettleMs = (replayed: number, floorMs: number) => Math.max(floorMs, replayed * 60);

/**
 * Waits (bounded) until no delivery workflow is running, so one scenario's leftovers
 * do not load the next. Returns the seconds it took, or null when the bound was hit.
 */
export async function settle(sys: BenchSystem, timeoutMs: number, userId?: string): Promise<{ seconds: number | null; still_running: number }> {
  const t0 = performance.now();
  for (;;) {
    const running = await sys.runningDeliveries(userId);
    if (running === 0) return { seconds: round((performance.now() - t0) / 1000, 1), still_running: 0 };
    if (performance.now() - t0 > timeoutMs) return { seconds: null, still_running: running };
    await new Promise((r) => setTimeout(r, 500));
  }
}
