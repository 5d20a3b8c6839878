import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { peakSampler, round } from './processes';
import { apiThroughput, backlog, burst, ceiling, latency, type Sizes } from './scenarios';
import { startBenchSystem } from './system';

/**
 * `npm run bench [-- --quick] [--only burst,latency,api,failure,ceiling,backlog]
 *   [--events N] [--rate R] [--seconds S] [--backlog M]`
 * Starts the system (embedded services unless DATABASE_URL/TEMPORAL_ADDRESS are
 * set) with separate api and worker processes, runs the scenarios and prints one
 * JSON document, also written to bench/results/<date>.json.
 */
const { values } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    only: { type: 'string' },
    events: { type: 'string' }, // burst size
    rate: { type: 'string' }, // latency scenarios: events/s
    seconds: { type: 'string' }, // latency scenarios: duration
    backlog: { type: 'string' }, // backlog size
  },
});
const ALL = ['burst', 'latency', 'api', 'failure', 'ceiling', 'backlog'];
const selected = new Set(values.only ? values.only.split(',') : ALL);
const sizes: Sizes = values.quick
  ? { burstEvents: 200, latencyRate: 10, latencySeconds: 10, apiSeconds: 3, backlogEvents: 300 }
  : { burstEvents: 2000, latencyRate: 20, latencySeconds: 60, apiSeconds: 10, backlogEvents: 10_000 };
if (values.events) sizes.burstEvents = Number(values.events);
if (values.rate) sizes.latencyRate = Number(values.rate);
if (values.seconds) sizes.latencySeconds = Number(values.seconds);
if (values.backlog) sizes.backlogEvents = Number(values.backlog);

// Retries are waited out on durable timers; 10 s keeps the backlog waiting long enough to measure.
const sys = await startBenchSystem({ SHIPHOOK_RETRY_DELAYS: '10s,10s,10s,10s,10s', SHIPHOOK_ATTEMPT_TIMEOUT: '5s', SHIPHOOK_DISABLE_AFTER_FAILURES: '1000000' });
const peak = peakSampler(sys.pids);
const results: Record<string, unknown> = {};
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
try {
  if (selected.has('burst')) { log('burst'); results.burst = await burst(sys, sizes.burstEvents); }
  if (selected.has('latency')) { log('latency'); results.latency = await latency(sys, sizes.latencyRate, sizes.latencySeconds); }
  if (selected.has('api')) { log('api'); results.api = await apiThroughput(sys, sizes.apiSeconds); }
  if (selected.has('failure')) {
    log('failure');
    const failure = await latency(sys, sizes.latencyRate, sizes.latencySeconds, { failingReceiver: true });
    const base = (results.latency as Awaited<ReturnType<typeof latency>> | undefined)?.latency_ms;
    results.failure = { ...failure, p95_vs_latency_scenario: base ? round(failure.latency_ms.p95 / base.p95, 2) : null, within_20_percent: base ? failure.latency_ms.p95 <= base.p95 * 1.2 : null };
  }
  if (selected.has('ceiling')) {
    log('ceiling');
    const c = await ceiling(sizes.burstEvents);
    const engine = (results.burst as { deliveries_per_second?: number } | undefined)?.deliveries_per_second;
    results.ceiling = { ...c, engine_to_ceiling: engine ? round(engine / c.deliveries_per_second, 3) : null };
  }
  if (selected.has('backlog')) { log('backlog'); results.backlog = await backlog(sys, sizes.backlogEvents); }
} finally {
  peak.stop();
  await sys.stop();
}

const doc = {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, memory_gb: round(os.totalmem() / 2 ** 30), node: process.version },
  mode: values.quick ? 'quick' : 'full',
  peak_rss_mb: Object.fromEntries(Object.entries(peak.peak).map(([k, v]) => [k, round(v)])),
  ...results,
};
const json = JSON.stringify(doc, null, 2);
process.stdout.write(json + '\n');
const dir = path.resolve('bench/results');
mkdirSync(dir, { recursive: true });
writeFileSync(path.join(dir, `${doc.date.replace(/[:.]/g, '-')}.json`), json + '\n');
