import { account, addWebhook, pool, publish, replayAll, verifyEvents, waitUntil, type WebhookSettings } from './client';
import { startCostMeter } from './cost';
import { round } from './processes';
import { type BenchReceiver, percentiles, startBenchReceiver } from './receivers';
import { startStorageMeter } from './storage';
import { type BenchSystem, benchDb } from './system';

/**
 * An account with three webhooks (or `webhooks` of them, each with `settings`), of which the
 * first `subscribed` take every type and the others only `batch.*` (the bench publishes `tracker.updated`).
 */
export async function threeReceivers(sys: BenchSystem, name: string, subscribed = 3, webhooks = 3, settings: WebhookSettings = {}) {
  const acct = await account(sys.origin, name);
  const receivers = await Promise.all(Array.from({ length: webhooks }, () => startBenchReceiver()));
  for (const [i, r] of receivers.entries()) await addWebhook(sys.origin, acct.testKey, r.url, i < subscribed ? null : ['batch.*'], settings);
  return { acct, receivers: receivers.slice(0, subscribed), unsubscribed: receivers.slice(subscribed) };
}

/** Events that some of these receivers never acknowledged. */
export const lostOn = (receivers: BenchReceiver[], ids: string[]) => ids.filter((id) => receivers.some((r) => !r.acknowledged.has(id))).length;

/** 1. Burst: N events as fast as the operator API accepts them (32 in flight), 3 webhooks each. */
export async function burst(sys: BenchSystem, n: number, waitMs: number) {
  const { acct, receivers } = await threeReceivers(sys, 'burst');
  const [meter, storage] = await Promise.all([startCostMeter(sys), startStorageMeter(sys)]);
  const t0 = performance.now();
  const ids: string[] = [];
  await pool(n, 32, async () => { ids.push(await publish(sys.origin, acct.userId)); });
  const publishSeconds = (performance.now() - t0) / 1000;
  const done = await waitUntil(() => receivers.every((r) => r.acknowledged.size >= n), waitMs);
  const allSeconds = (performance.now() - t0) / 1000;
  // The last attempts record their outcome after the receiver answered: wait for the runs to end.
  const settled = await settle(sys, 30_000, acct.userId);
  const cost = await meter.stop(n, spread(ids, 25));
  const stored = await storage.stop(n);
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
    // What each delivered event (3 URLs, one attempt each) left on disk.
    storage_per_delivered_event: stored,
  };
}

export const WARMUP_SECONDS = 3;
/** The trackers a steady load's events are about, in turn: an ordered webhook delivers each one's events one after another. */
const OBJECTS = 100;

/**
 * Publishes at a steady rate for `seconds`, recording each event's send time (epoch ms);
 * `userId` may name the account per event, and `published` hears of each as it is.
 */
export async function offer(sys: BenchSystem, userId: string | ((i: number) => string), rate: number, seconds: number, sentAt: Map<string, number>, published?: (id: string, i: number) => void) {
  const total = Math.round(rate * seconds);
  const t0 = performance.now();
  const inflight = new Set<Promise<void>>();
  let publishErrors = 0;
  for (let i = 0; i < total; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (inflight.size >= 256) await Promise.race(inflight); // never more than 256 open publishes
    const started = performance.timeOrigin + performance.now();
    const n = i;
    const p: Promise<void> = publish(sys.origin, typeof userId === 'string' ? userId : userId(n), `trk_bench_${n % OBJECTS}`)
      .then((id) => { sentAt.set(id, started); published?.(id, n); }, () => void publishErrors++)
      .finally(() => inflight.delete(p));
    inflight.add(p);
  }
  await Promise.all(inflight);
  return { total, publishErrors };
}

/** ~`n` ids spread over the list: the events whose workflow histories the cost meter reads. */
export const spread = (ids: string[], n: number) => ids.filter((_, i) => i % Math.ceil(ids.length / n) === 0);

/**
 * 2. Latency and 3. failure: steady offered load (events/s for `seconds`) to three
 * webhooks (`subscribed` of them taking the published type); latency from the publisher's send to each healthy receiver's first sight of
 * the event, and the cost per event. With `failing`, one of the three endpoints answers
 * 500 (or never answers) throughout, on the production retry schedule (5 s, 5 min, …):
 * each event's cost then carries the failing URL's first attempt, its retry activity and
 * its 5-second retry. Afterwards, as an operator does after an outage, what still retries
 * is replayed. Either way every event must end completed.
 */
export async function steadyLoad(sys: BenchSystem, load: { rate: number; seconds: number; waitMs: number; settleMs: number; subscribed?: number; webhooks?: number; webhook?: WebhookSettings }, failing?: '500' | 'hang') {
  const { acct, receivers, unsubscribed } = await threeReceivers(sys, failing ? 'failure' : 'latency', load.subscribed, load.webhooks, load.webhook);
  const failingReceiver = failing ? receivers[2]! : undefined;
  const healthy = failing ? receivers.slice(0, 2) : receivers;
  if (failingReceiver) failingReceiver.failWith = failing === 'hang' ? 'hang' : 500;
  try {
    // Warm-up at the same rate, not measured: the first second after a start is slower
    // (workflow contexts, JIT, new connections to the database and the receivers).
    await offer(sys, acct.userId, load.rate, WARMUP_SECONDS, new Map());
    const meter = await startCostMeter(sys);
    const sentAt = new Map<string, number>();
    const t0 = performance.now();
    const { total, publishErrors } = await offer(sys, acct.userId, load.rate, load.seconds, sentAt);
    const publishSeconds = (performance.now() - t0) / 1000;
    const ids = [...sentAt.keys()];
    const allReceived = await waitUntil(() => healthy.every((r) => ids.every((id) => r.firstSeen.has(id))), load.waitMs);
    const cost = await meter.stop(ids.length, spread(ids, 10));
    const samples = healthy.flatMap((r) => ids.flatMap((id) => (r.firstSeen.has(id) ? [r.firstSeen.get(id)! - sentAt.get(id)!] : [])));
    let replayed = 0;
    if (failingReceiver) {
      failingReceiver.failWith = null;
      replayed = await replayAll(sys.origin, acct.userId, 'retrying');
    }
    const settled = await settle(sys, replaySettleMs(replayed, load.settleMs), acct.userId);
    return {
      warmup_seconds_not_measured: WARMUP_SECONDS,
      offered_events_per_second: load.rate,
      seconds: load.seconds,
      events: total,
      achieved_publish_per_second: round(ids.length / publishSeconds),
      publish_errors: publishErrors,
      ...(failing ? { failing_endpoint: failing, requests_to_failing_receiver: failingReceiver!.requests } : {}),
      healthy_receivers: healthy.length,
      ...(load.webhook && Object.keys(load.webhook).length ? { webhook_settings: load.webhook } : {}),
      ...(unsubscribed.length ? { webhooks_not_subscribed: unsubscribed.length, requests_to_unsubscribed: unsubscribed.reduce((n, r) => n + r.requests, 0) } : {}),
      latency_ms: percentiles(samples),
      all_received_within_wait: allReceived,
      not_received_within_wait: ids.length * healthy.length - samples.length,
      ...(failing ? { replayed_after_recovery: replayed } : {}),
      lost_events: lostOn(receivers, ids),
      workflows_finished_after: settled,
      api_view: await verifyEvents(sys.origin, acct.testKey, ids, receivers.length),
      cost,
    };
  } finally {
    await Promise.all([...receivers, ...unsubscribed].map((r) => r.close()));
  }
}

/**
 * How long to wait for `replayed` events to finish after an operator replay: the
 * bound grows with the replay (at least ~16 replayed events/s), so a large replay is
 * not reported as unfinished only because the wait was sized for a small one.
 */
export const replaySettleMs = (replayed: number, floorMs: number) => Math.max(floorMs, replayed * 60);

/**
 * Waits (bounded) until no delivery workflow is running and no event waits for one (a
 * replayed event's old run is terminated before its new one starts: between the two only
 * the database knows it is not done), so one scenario's leftovers do not load the next.
 * Returns the seconds it took, or null when the bound was hit.
 */
export async function settle(sys: BenchSystem, timeoutMs: number, userId?: string): Promise<{ seconds: number | null; still_running: number }> {
  const t0 = performance.now();
  const db = await benchDb(sys);
  const unfinished = async () =>
    Number((await db.query<{ n: string }>(`select count(*) as n from events where status in ('in_queue', 'retrying') and ($1::text is null or user_id = $1)`, [userId ?? null])).rows[0]!.n);
  try {
    for (;;) {
      const running = (await sys.runningDeliveries(userId)) + (await unfinished());
      if (running === 0) return { seconds: round((performance.now() - t0) / 1000, 1), still_running: 0 };
      if (performance.now() - t0 > timeoutMs) return { seconds: null, still_running: running };
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await db.end();
  }
}
