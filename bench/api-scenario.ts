import autocannon from 'autocannon';
import { account, addWebhook, pool, publish } from './client';
import { settle } from './delivery-scenarios';
import { round } from './processes';
import { startBenchReceiver } from './receivers';
import type { BenchSystem } from './system';

const CONNECTIONS = 16;

/** 3. API throughput with autocannon at fixed concurrency, one endpoint at a time. */
export async function apiThroughput(sys: BenchSystem, seconds: number) {
  // Webhook URLs point at a local receiver: the seeded events' deliveries stay on loopback.
  const receiver = await startBenchReceiver();
  const acct = await account(sys.origin, 'api');
  for (let i = 0; i < 3; i++) await addWebhook(sys.origin, acct.testKey, `${receiver.url}/${i}`);
  for (let i = 0; i < 100; i++) await publish(sys.origin, acct.userId);
  await settle(sys, 60_000, acct.userId); // their deliveries are done before the measurement starts
  const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;
  // Accounts are limited to 100 webhooks per mode, so POST /v2/webhooks rotates over
  // enough of them for 2,000 creations a second.
  const creators: { testKey: string }[] = [];
  await pool(Math.ceil((seconds * 2000) / 100), 8, async (i) => void creators.push(await account(sys.origin, `api-post-${i}`)));
  let turn = 0;
  const run = (opts: autocannon.Options) =>
    new Promise<autocannon.Result>((resolve, reject) => autocannon({ connections: CONNECTIONS, duration: seconds, ...opts }, (err, res) => (err ? reject(err) : resolve(res))));
  const summary = (r: autocannon.Result) => ({
    requests_per_second: round(r.requests.average),
    latency_p50_ms: r.latency.p50,
    latency_p99_ms: r.latency.p99,
    requests: r.requests.total,
    non_2xx: r.non2xx,
    errors: r.errors,
  });
  const list = await run({ url: `${sys.origin}/v2/webhooks`, headers: { authorization: basic(acct.testKey) } });
  const events = await run({ url: `${sys.origin}/v2/events?page_size=100`, headers: { authorization: basic(acct.testKey) } });
  const create = await run({
    url: `${sys.origin}/v2/webhooks`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ webhook: { url: `${receiver.url}/created` } }),
    requests: [{ setupRequest: (req: any) => ({ ...req, headers: { ...req.headers, authorization: basic(creators[turn++ % creators.length]!.testKey) } }) }],
  });
  await receiver.close();
  return {
    connections: CONNECTIONS,
    seconds_per_endpoint: seconds,
    'GET /v2/webhooks': summary(list),
    'GET /v2/events?page_size=100': summary(events),
    'POST /v2/webhooks': summary(create),
  };
}
