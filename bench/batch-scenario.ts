import { account, addWebhook, pool, publish, publishBatch, waitUntil } from './client';
import { startCostMeter } from './cost';
import { lostOn, settle } from './delivery-scenarios';
import { round } from './processes';
import { startBenchReceiver } from './receivers';
import type { BenchSystem } from './system';

export const BATCH_SIZE = 100;

/**
 * Publish CPU per event: `events` events one `POST /admin/v1/events` each (32 in
 * flight), then the same number in batches of 100 (`POST /admin/v1/events/batch`, 4 in
 * flight), each to one healthy webhook of its own account. The api processes only
 * publish (the workers' dispatchers start the deliveries), so their CPU per event is the
 * publish cost; `system_total` includes delivering each event once, alike for both.
 */
export async function batchPublish(sys: BenchSystem, opts: { events: number; waitMs: number; settleMs: number }) {
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
