import autocannon from 'autocannon';
import { Client, Connection } from '@temporalio/client';
import { Agent, request } from 'undici';
import { createDb } from '../src/db/database';
import { deliveryBody } from '../src/domain/signature';
import { account, addWebhook, api, EVENT_RESULT, pool, publish, waitUntil } from './client';
import { round, usageOver } from './processes';
import { type BenchReceiver, percentiles, startBenchReceiver } from './receivers';
import type { BenchSystem } from './system';

export interface Sizes {
  burstEvents: number;
  latencyRate: number;
  latencySeconds: number;
  apiSeconds: number;
  backlogEvents: number;
}

async function unfinished(sys: BenchSystem, userId: string) {
  const db = createDb(sys.databaseUrl, 1);
  try {
    const rows = await db.selectFrom('events').select(['status']).select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).groupBy('status').execute();
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  } finally {
    await db.destroy();
  }
}

async function threeReceivers(sys: BenchSystem, name: string) {
  const acct = await account(sys.origin, name);
  const receivers = await Promise.all([startBenchReceiver(), startBenchReceiver(), startBenchReceiver()]);
  for (const r of receivers) await addWebhook(sys.origin, acct.testKey, r.url);
  return { acct, receivers };
}

/** 1. Burst: N events as fast as the operator API accepts them, 3 webhooks each. */
export async function burst(sys: BenchSystem, n: number) {
  const { acct, receivers } = await threeReceivers(sys, 'burst');
  const t0 = performance.now();
  const ids: string[] = [];
  await pool(n, 32, async () => { ids.push(await publish(sys.origin, acct.userId)); });
  const publishSeconds = (performance.now() - t0) / 1000;
  const done = await waitUntil(() => receivers.every((r) => r.acknowledged.size >= n), Math.max(120_000, n * 200));
  const allSeconds = (performance.now() - t0) / 1000;
  await new Promise((r) => setTimeout(r, 1500)); // let the final status writes land
  const statuses = await unfinished(sys, acct.userId);
  await Promise.all(receivers.map((r) => r.close()));
  return {
    events: n,
    webhooks: 3,
    publish_per_second: round(n / publishSeconds),
    seconds_until_all_acknowledged: round(allSeconds, 2),
    events_per_second_end_to_end: round(n / allSeconds),
    deliveries_per_second: round((3 * n) / allSeconds),
    all_acknowledged: done,
    lost_or_pending: n - Math.min(...receivers.map((r) => ids.filter((id) => r.acknowledged.has(id)).length)),
    duplicate_requests: receivers.reduce((s, r) => s + r.requests, 0) - 3 * n,
    event_statuses: statuses,
  };
}

/** 2./4. Steady offered load; publish → first attempt received, per delivery. */
export async function latency(sys: BenchSystem, rate: number, seconds: number, opts: { failingReceiver?: boolean } = {}) {
  const { acct, receivers } = await threeReceivers(sys, opts.failingReceiver ? 'failure' : 'latency');
  if (opts.failingReceiver) receivers[2]!.failWith = 500;
  const healthy = opts.failingReceiver ? receivers.slice(0, 2) : receivers;
  const sentAt = new Map<string, number>();
  const total = rate * seconds;
  const t0 = performance.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const started = performance.timeOrigin + performance.now();
    inflight.push(publish(sys.origin, acct.userId).then((id) => void sentAt.set(id, started)));
  }
  await Promise.all(inflight);
  await waitUntil(() => healthy.every((r) => r.acknowledged.size >= total), 60_000);
  const samples: number[] = [];
  for (const r of healthy) for (const [id, at] of r.firstSeen) if (sentAt.has(id)) samples.push(at - sentAt.get(id)!);
  await Promise.all(receivers.map((r) => r.close()));
  return { offered_events_per_second: rate, seconds, events: total, healthy_receivers: healthy.length, latency_ms: percentiles(samples), lost: total * healthy.length - samples.length };
}

/** 3. API throughput with autocannon at fixed concurrency. */
export async function apiThroughput(sys: BenchSystem, seconds: number) {
  const acct = await account(sys.origin, 'api');
  for (let i = 0; i < 3; i++) await addWebhook(sys.origin, acct.testKey, `https://example.com/hook/${i}`);
  for (let i = 0; i < 100; i++) await publish(sys.origin, acct.userId);
  const auth = `Basic ${Buffer.from(`${acct.testKey}:`).toString('base64')}`;
  // POST /v2/webhooks: accounts are limited to 100 webhooks per mode, so rotate many.
  const creators = await Promise.all(Array.from({ length: 60 }, (_, i) => account(sys.origin, `api-post-${i}`)));
  let turn = 0;
  const run = (opts: autocannon.Options) =>
    new Promise<autocannon.Result>((resolve, reject) => autocannon({ connections: 16, duration: seconds, ...opts }, (err, res) => (err ? reject(err) : resolve(res))));
  const summary = (r: autocannon.Result) => ({ requests_per_second: round(r.requests.average), latency_p99_ms: r.latency.p99, non_2xx: r.non2xx, errors: r.errors });
  const list = await run({ url: `${sys.origin}/v2/webhooks`, headers: { authorization: auth } });
  const events = await run({ url: `${sys.origin}/v2/events?page_size=100`, headers: { authorization: auth } });
  const create = await run({
    url: `${sys.origin}/v2/webhooks`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ webhook: { url: 'https://example.com/created' } }),
    requests: [{ setupRequest: (req: any) => ({ ...req, headers: { ...req.headers, authorization: `Basic ${Buffer.from(`${creators[turn++ % creators.length]!.testKey}:`).toString('base64')}` } }) }],
  });
  return { connections: 16, seconds, 'GET /v2/webhooks': summary(list), 'GET /v2/events?page_size=100': summary(events), 'POST /v2/webhooks': summary(create) };
}

/** 5. The HTTP ceiling: the same receivers hit directly by undici from one process. */
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
  return { deliveries: 3 * n, deliveries_per_second: round((3 * n) / seconds) };
}

/** 6. Backlog: one endpoint down while M events wait on their retry timers, then recovery. */
export async function backlog(sys: BenchSystem, m: number) {
  const acct = await account(sys.origin, 'backlog');
  const receiver: BenchReceiver = await startBenchReceiver();
  receiver.failWith = 503;
  await addWebhook(sys.origin, acct.testKey, receiver.url);
  const t0 = performance.now();
  await pool(m, 32, async () => { await publish(sys.origin, acct.userId); });
  const firstAttempts = await waitUntil(() => receiver.firstSeen.size >= m, Math.max(180_000, m * 100));
  const secondsToFirstAttempts = (performance.now() - t0) / 1000;
  const client = new Client({ connection: await Connection.connect({ address: sys.temporalAddress }), namespace: 'default' });
  const open = await client.workflow.count(`ExecutionStatus = "Running" AND ShiphookUserId = "${acct.userId}"`);
  const waiting = await usageOver(sys.pids, 10_000);
  receiver.failWith = null;
  const r0 = performance.now();
  const drained = await waitUntil(() => receiver.acknowledged.size >= m, Math.max(300_000, m * 100));
  const drainSeconds = (performance.now() - r0) / 1000;
  await new Promise((r) => setTimeout(r, 1500));
  const statuses = await unfinished(sys, acct.userId);
  await client.connection.close();
  await receiver.close();
  return {
    events: m,
    seconds_until_every_first_attempt: round(secondsToFirstAttempts, 1),
    open_workflows_while_waiting: open.count,
    while_waiting_10s: waiting,
    drained,
    seconds_to_drain_after_recovery: round(drainSeconds, 1),
    event_statuses: statuses,
  };
}

export { api };
