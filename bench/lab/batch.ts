import { account, addWebhook, api, newEvent, pool, publish, waitUntil } from '../client';
import { startCostMeter } from '../cost';
import { lostOn, settle } from '../delivery-scenarios';
import { round } from '../processes';
import { startBenchReceiver } from '../receivers';
import type { BenchSystem } from '../system';
import type { LabScenario } from './index';

const BATCH_SIZE = 100;

/** `n` events in one `POST /admin/v1/events/batch`; their ids in order. */
async function publishBatch(origin: string, userId: string, n: number): Promise<string[]> {
  const res = await api(origin, 'POST', '/admin/v1/events/batch', { admin: true, body: { events: Array.from({ length: n }, () => newEvent(userId)) } });
  if (res.status !== 201) throw new Error(`publish batch: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  return res.body.events.map((e: { id: string }) => e.id);
}

/**
 * Publish CPU per event: `events` events one `POST /admin/v1/events` each (32 in
 * flight), then the same number in batches of 100 (`POST /admin/v1/events/batch`, 4 in
 * flight), each to one healthy webhook of its own account. The api processes only
 * publish (the workers' dispatchers start the deliveries), so their CPU per event is the
 * publish cost; `system_total` includes delivering each event once, alike for both.
 */
export const batch: LabScenario = {
  about: `publish CPU per event: single publishes against batches of ${BATCH_SIZE} (--events, at least 1,000)`,
  run: (sys, { quick, number }) => singleAgainstBatches(sys, { events: Math.max(1000, number('events', quick ? 200 : 2000)), waitMs: quick ? 60_000 : 240_000, settleMs: quick ? 30_000 : 45_000 }),
};

async function singleAgainstBatches(sys: BenchSystem, opts: { events: number; waitMs: number; settleMs: number }) {
  const n = Math.ceil(opts.events / BATCH_SIZE) * BATCH_SIZE;
  const ways = {
    single: (userId: string, ids: string[]) => pool(n, 32, async () => { ids.push(await publish(sys.origin, userId)); }),
    [`batches_of_${BATCH_SIZE}`]: (userId: string, ids: string[]) => pool(n / BATCH_SIZE, 4, async () => { ids.push(...(await publishBatch(sys.origin, userId, BATCH_SIZE))); }),
  };
  const out: Record<string, unknown> = { events: n };
  for (const [way, publishAll] of Object.entries(ways)) {
    const acct = await account(sys.origin, `batch-${way}`);
    const receiver = await startBenchReceiver();
    await addWebhook(sys.origin, acct.testKey, receiver.url);
    try {
      const meter = await startCostMeter(sys);
      const ids: string[] = [];
      const t0 = performance.now();
      await publishAll(acct.userId, ids);
      const publishSeconds = (performance.now() - t0) / 1000;
      await waitUntil(() => receiver.acknowledged.size >= n, opts.waitMs);
      const settled = await settle(sys, opts.settleMs, acct.userId);
      const { cpu_ms_per_event: cpu } = (await meter.stop(n)) as { cpu_ms_per_event: Record<string, number> };
      out[way] = { publish_per_second: round(n / publishSeconds), api_cpu_ms_per_event: cpu.api, cpu_ms_per_event: cpu, lost_events: lostOn([receiver], ids), workflows_finished: settled };
    } finally {
      await receiver.close();
    }
  }
  return out;
}
