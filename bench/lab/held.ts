import { account, addWebhook, api, newEvent, pool } from '../client';
import { memoryByProcess, round } from '../processes';
import { startBenchReceiver } from '../receivers';
import { type BenchSystem, benchDb } from '../system';
import type { LabScenario } from './index';

/** Events per `POST /admin/v1/events/batch` (its most). */
const BATCH = 500;
/** RSS samples once every delivery is held, this far apart: the peak of a worker that has settled. */
const SAMPLES = 5;
const SAMPLE_EVERY_MS = 2000;

/**
 * A backlog held by a rate limit: N events (each about a tracker of its own) to one webhook
 * limited to 1 delivery/s, published in batches. Once every delivery but the few already sent
 * is held (its run waiting on a durable timer for its slot), the RSS of each process: what
 * 10,000 held deliveries cost the workers' memory. The receiver then gets one a second; the
 * bench stops the system with the backlog still held.
 */
export const held: LabScenario = {
  about: 'N events (--held-events, default 10,000) held by a webhook limited to 1/s: the RSS of each process while they wait',
  flags: { 'held-events': 'held: events held by the rate limit (default 10,000; --quick 1,000)' },
  run: (sys, { quick, number }) => heldBacklog(sys, number('held-events', quick ? 1000 : 10_000), quick ? 120_000 : 900_000),
};

async function heldBacklog(sys: BenchSystem, n: number, waitMs: number) {
  const receiver = await startBenchReceiver();
  const db = await benchDb(sys);
  try {
    const acct = await account(sys.origin, 'held');
    const hook = await addWebhook(sys.origin, acct.testKey, receiver.url, null, { rate_limit: 1 });
    const rssBefore = await memoryByProcess(sys.processes(), 'Rss');
    const t0 = performance.now();
    await pool(Math.ceil(n / BATCH), 4, async (b) => {
      const events = Array.from({ length: Math.min(BATCH, n - b * BATCH) }, (_, k) => newEvent(acct.userId, `trk_held_${b * BATCH + k}`));
      const res = await api(sys.origin, 'POST', '/admin/v1/events/batch', { admin: true, body: { events } });
      if (res.status !== 201) throw new Error(`publish batch: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    });
    const publishSeconds = (performance.now() - t0) / 1000;
    const heldNow = async () => Number((await db.query<{ n: string }>(`select count(*) as n from event_deliveries where webhook_id = $1 and state = 'pending' and waiting_for = 'rate_limit'`, [hook.id])).rows[0]!.n);
    let heldCount = 0;
    for (const deadline = Date.now() + waitMs; (heldCount = await heldNow()) + receiver.requests < n - 2 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 1000));
    const heldSeconds = (performance.now() - t0) / 1000;
    const peaks: Record<string, number> = {};
    for (let i = 0; i < SAMPLES; i++) {
      if (i) await new Promise((r) => setTimeout(r, SAMPLE_EVERY_MS));
      for (const [name, mb] of Object.entries(await memoryByProcess(sys.processes(), 'Rss'))) peaks[name] = Math.max(peaks[name] ?? 0, round(mb));
    }
    return {
      events: n,
      rate_limit_per_second: 1,
      publish_seconds: round(publishSeconds),
      held: heldCount,
      sent_meanwhile: receiver.requests,
      seconds_until_all_held: round(heldSeconds),
      all_held: heldCount + receiver.requests >= n - 2,
      running_delivery_workflows: await sys.runningDeliveries(acct.userId),
      rss_mb_before: Object.fromEntries(Object.entries(rssBefore).map(([k, v]) => [k, round(v)])),
      rss_mb_while_held: peaks,
    };
  } finally {
    await db.end();
    await receiver.close();
  }
}
