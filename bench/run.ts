import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { duration } from '../src/config';
import { apiThroughput } from './api-scenario';
import { backlog } from './backlog-scenario';
import { burst, ceiling, latency, settle } from './delivery-scenarios';
import { failure } from './failure-scenario';
import { floor } from './floor-scenario';
import { peakSampler, round } from './processes';
import { againstTarget, p99RatioInterval } from './p99-interval';
import { retry } from './retry-scenario';
import { saturation } from './saturation-scenario';
import { correctness, P99_RATIO_TARGET, performanceTargets, capacity } from './targets';
import { type BenchSystem, startBenchSystem } from './system';
import { partsAdded } from './temporal-profile';
import { saveWindowBlocks, windowBlocks } from './window-blocks';

/**
 * `npm run bench [-- --quick] [--only floor,burst,latency,api,failure,retry,saturation,ceiling,backlog]
 *   [--events N] [--rate R] [--seconds S] [--failure-second-window] [--retry-events N] [--saturation-rate R] [--saturation-seconds S]
 *   [--backlog M] [--backlog-delay 2m] [--backlog-fill S]`
 * Starts the system (embedded services unless DATABASE_URL/TEMPORAL_ADDRESS are
 * set) with separate api and worker processes, runs the scenarios in order and
 * prints one JSON document, also written to bench/results/<date>.json, ending with
 * the efficiency targets (issue #14) and the correctness checks. Every wait is
 * bounded, so a slow engine yields a partial result instead of a hung run. Exits 1
 * when a correctness check fails (an event lost or not completed); a performance
 * target not met does not change the exit code.
 */
const USAGE = 'npm run bench -- [--quick] [--only floor,burst,latency,api,failure,retry,saturation,ceiling,backlog] [--events N] [--rate R] [--seconds S] [--failure-second-window] [--failing-endpoint 500|hang] [--attempt-timeout 15s] [--api-seconds S] [--retry-events N] [--saturation-rate R] [--saturation-seconds S] [--backlog M] [--backlog-delay 2m] [--backlog-fill S] [--profile]';
const { values } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    only: { type: 'string' },
    events: { type: 'string' }, // burst size (and the floor's and the ceiling's)
    rate: { type: 'string' }, // latency and failure: events/s offered
    seconds: { type: 'string' }, // latency and failure: duration
    'api-seconds': { type: 'string' }, // per API endpoint
    'failure-second-window': { type: 'boolean' }, // quick runs too: the failure's window while its 5-minute retries come due, then its no-failure window (~8 min more)
    'retry-events': { type: 'string' }, // retry: events whose later attempts are measured
    'saturation-rate': { type: 'string' }, // saturation: events/s offered (default: twice the burst's end-to-end rate)
    'saturation-seconds': { type: 'string' }, // saturation: seconds of publishing
    backlog: { type: 'string' }, // backlog size M
    'backlog-delay': { type: 'string' }, // retry delay while the backlog waits
    'backlog-fill': { type: 'string' }, // seconds allowed for publishing the backlog and its first attempts
    'failing-endpoint': { type: 'string' }, // failure: 500 (default) or hang (never answers)
    'attempt-timeout': { type: 'string' }, // the engine's SHIPHOOK_ATTEMPT_TIMEOUT (default 5s; production's is 15s)
    profile: { type: 'boolean' }, // api and worker write CPU profiles to bench/results/profiles-<date>/, and perf samples the Temporal dev server in each measured window
    help: { type: 'boolean' },
  },
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const ALL = ['floor', 'burst', 'latency', 'api', 'failure', 'retry', 'saturation', 'ceiling', 'backlog'];
const selected = new Set(values.only ? values.only.split(',').map((s) => s.trim()) : ALL);
for (const s of selected) if (!ALL.includes(s)) throw new Error(`unknown scenario "${s}"; one of ${ALL.join(', ')}`);

const quick = values.quick === true;
const num = (text: string | undefined, fallback: number, name: string) => {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!(n > 0)) throw new Error(`--${name} must be a positive number`);
  return n;
};
const sizes = {
  burstEvents: num(values.events, quick ? 200 : 2000, 'events'),
  latencyRate: num(values.rate, quick ? 10 : 20, 'rate'),
  latencySeconds: num(values.seconds, quick ? 10 : 60, 'seconds'),
  apiSeconds: num(values['api-seconds'], quick ? 3 : 10, 'api-seconds'),
  retryEvents: num(values['retry-events'], quick ? 60 : 300, 'retry-events'),
  retryPublishRate: quick ? 20 : 50,
  saturationRate: values['saturation-rate'] === undefined ? undefined : num(values['saturation-rate'], 0, 'saturation-rate'),
  saturationSeconds: num(values['saturation-seconds'], quick ? 15 : 60, 'saturation-seconds'),
  saturationSampleSeconds: quick ? 2 : 5,
  backlogEvents: num(values.backlog, quick ? 300 : 10_000, 'backlog'),
  // Longer than the fill (~40 first attempts/s): the events really wait while measured.
  backlogDelay: values['backlog-delay'] ?? (quick ? '90s' : '7m'),
};
// Time bounds (ms) that keep a full run under ~35 minutes (quick: ~5) on 2 cores whatever the engine's speed
// (the backlog's fill is sized for 10,000 events at ~40 first attempts/s).
const budget = {
  burstWait: quick ? 60_000 : 240_000,
  latencyWait: quick ? 30_000 : 60_000,
  settle: quick ? 30_000 : 45_000,
  retryWait: quick ? 30_000 : 60_000,
  saturationDrain: quick ? 120_000 : 360_000,
  // After a recovery the replayed events (one URL each) are delivered again: thousands in a full run.
  replaySettle: quick ? 60_000 : 180_000,
  backlogFill: num(values['backlog-fill'], quick ? 60 : 330, 'backlog-fill') * 1000,
  backlogDrain: quick ? 150_000 : 600_000,
};

// The production retry schedule (5s, 5m, 30m, …): the failure scenario measures what a
// failing endpoint costs in production, then replays what still waits. The backlog sets its own.
const BASE_ENV = { SHIPHOOK_ATTEMPT_TIMEOUT: values['attempt-timeout'] ?? '5s', SHIPHOOK_DISABLE_AFTER_FAILURES: '1000000' };
const failingEndpoint = values['failing-endpoint'] ?? '500';
if (failingEndpoint !== '500' && failingEndpoint !== 'hang') {
  console.error(`--failing-endpoint must be 500 or hang\n${USAGE}`);
  process.exit(2);
}
type Percentiles = { p50: number; p95: number; p99: number };
/** The failure scenario's healthy-receiver latency against the latency scenario's (same load, no failing URL). */
const vsLatency = (p: Percentiles, base: Percentiles | undefined) => {
  if (!base) return 'run with the latency scenario to compare';
  const ratio = (k: keyof Percentiles) => (base[k] > 0 ? round(p[k] / base[k], 2) : null);
  // How far the p99 ratio could move from the two windows' own sampling (bench/p99-interval.ts).
  const interval = p99RatioInterval(p, base);
  return {
    p50_ratio: ratio('p50'),
    p95_ratio: ratio('p95'),
    p99_ratio: ratio('p99'),
    // What the failing endpoint added to the healthy p99, in ms (the ratio's base moves run to run too).
    p99_added_ms: p.p99 - base.p99,
    p99_within_1_3x: p.p99 <= base.p99 * P99_RATIO_TARGET,
    ...(interval ? { p99_ratio_90pct_interval: interval.map((r) => round(r, 2)), p99_ratio_vs_1_3: againstTarget(interval, P99_RATIO_TARGET) } : {}),
  };
};
const log = (msg: string) => process.stderr.write(`[bench] ${new Date().toISOString().slice(11, 19)} ${msg}\n`);

// The floor scenario runs a worker in this process: its SDK logs only from WARN up.
Runtime.install({ logger: new DefaultLogger('WARN') });

const started = performance.now();
let sys: BenchSystem | undefined;
let stopping: Promise<void> | undefined;
const stopSystem = () => (stopping ??= sys?.stop() ?? Promise.resolve());
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the system`);
    void stopSystem().finally(() => process.exit(130));
  });
}

const profileDir = values.profile ? path.resolve(`bench/results/profiles-${new Date().toISOString().replace(/[:.]/g, '-')}`) : undefined;
if (profileDir) log(`CPU profiles of api and worker go to ${profileDir} (open them in Chrome DevTools); the Temporal dev server's, per measured window, too (perf), summarised in each window's cost`);
// A process that died makes every figure after it meaningless (and its waits may never end): stop.
const died = (reason: string) => {
  log(`${reason}; stopping the system, no results`);
  void stopSystem().finally(() => process.exit(1));
};
sys = await startBenchSystem(BASE_ENV, { profileDir, onDied: died });
const peak = peakSampler(sys.pids, 500);
const results: Record<string, unknown> = {};
const seconds: Record<string, number> = {};
const step = async (name: string, fn: (s: BenchSystem) => Promise<unknown>) => {
  if (!selected.has(name)) return;
  log(name);
  const t0 = performance.now();
  try {
    results[name] = await fn(sys!);
  } catch (err) {
    results[name] = { error: String((err as Error).stack ?? err).slice(0, 500) };
  }
  // Leftover deliveries of this scenario must not load the next one.
  const quiet = await settle(sys!, budget.settle).catch(() => null);
  if (quiet && quiet.still_running) log(`${quiet.still_running} deliveries still running after ${name}`);
  seconds[name] = round((performance.now() - t0) / 1000);
};

try {
  await step('floor', (s) => floor(s, sizes.burstEvents, budget.burstWait));
  await step('burst', async (s) => {
    const b = await burst(s, sizes.burstEvents, budget.burstWait);
    const floorRate = (results.floor as { workflows_per_second?: number } | undefined)?.workflows_per_second;
    return { ...b, engine_to_floor: floorRate ? round(b.events_per_second_end_to_end / floorRate, 2) : 'run with the floor scenario to compare' };
  });
  const load = { rate: sizes.latencyRate, seconds: sizes.latencySeconds, waitMs: budget.latencyWait };
  await step('latency', (s) => latency(s, load));
  await step('api', (s) => apiThroughput(s, sizes.apiSeconds));
  await step('failure', async (s) => {
    const f = await failure(s, { ...load, secondWindow: !quick || values['failure-second-window'] === true, settleMs: budget.replaySettle, failingEndpoint, attemptTimeoutMs: duration(BASE_ENV.SHIPHOOK_ATTEMPT_TIMEOUT, '--attempt-timeout') });
    const base = (results.latency as { latency_ms?: Percentiles } | undefined)?.latency_ms;
    const second = f.while_earlier_retries_due;
    const after = f.no_failure_after;
    const afterP = typeof after === 'string' ? undefined : (after.latency_ms as Percentiles);
    // With --profile: what each failure window added to the Temporal server's CPU per event, by part.
    const latencyCost = (results.latency as { cost?: unknown } | undefined)?.cost;
    const secondCost = typeof second === 'string' ? undefined : second.cost;
    const profiled = (added: Record<string, number> | undefined, key: string) => (added ? { [key]: added } : {});
    return {
      ...f,
      vs_latency_scenario: vsLatency(f.latency_ms, base),
      ...profiled(partsAdded(f.cost, latencyCost), 'temporal_cpu_ms_added_by_part_vs_latency_scenario'),
      while_earlier_retries_due:
        typeof second === 'string'
          ? second
          : {
              ...second,
              vs_latency_scenario: vsLatency(second.latency_ms as Percentiles, base),
              vs_no_failure_after: afterP ? vsLatency(second.latency_ms as Percentiles, afterP) : after,
              ...profiled(partsAdded(secondCost, typeof after === 'string' ? undefined : after.cost), 'temporal_cpu_ms_added_by_part_vs_no_failure_after'),
              ...profiled(partsAdded(secondCost, f.cost), 'temporal_cpu_ms_added_by_part_vs_first_window'),
            },
      // Both no-failure windows, ~8 minutes apart: how far the machine drifted between them.
      no_failure_after: typeof after === 'string' ? after : { ...after, vs_latency_scenario: vsLatency(afterP!, base) },
    };
  });
  await step('retry', (s) => retry(s, { events: sizes.retryEvents, rate: sizes.retryPublishRate, waitMs: budget.retryWait, windowMs: budget.retryWait, settleMs: 60_000 }));
  await step('saturation', (s) => {
    const burstRate = (results.burst as { events_per_second_end_to_end?: number } | undefined)?.events_per_second_end_to_end;
    // More than the system takes: twice what the burst measured end to end.
    const rate = sizes.saturationRate ?? (burstRate ? round(2 * burstRate) : 100);
    return saturation(s, { rate, seconds: sizes.saturationSeconds, sampleMs: sizes.saturationSampleSeconds * 1000, drainMs: budget.saturationDrain, settleMs: budget.replaySettle, burstRate });
  });
  await step('ceiling', async () => {
    const c = await ceiling(sizes.burstEvents);
    const engine = (results.burst as { deliveries_per_second?: number } | undefined)?.deliveries_per_second;
    return { ...c, engine_to_ceiling: engine ? round(engine / c.deliveries_per_second, 3) : 'run with the burst scenario to compare' };
  });
  await step('backlog', (s) => backlog(s, { events: sizes.backlogEvents, retryDelay: sizes.backlogDelay, fillMs: budget.backlogFill, ahead: quick ? 100 : 300, drainMs: Math.max(budget.backlogDrain, budget.backlogFill) }));
} finally {
  peak.stop();
  await stopSystem();
}

const doc = {
  date: new Date().toISOString(),
  command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
  machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, memory_gb: round(os.totalmem() / 2 ** 30), node: process.version, load_average_1m_at_end: round(os.loadavg()[0]!, 2) },
  mode: quick ? 'quick' : 'full',
  sizes,
  budgets_ms: budget,
  services: { postgres: process.env.DATABASE_URL ? 'external' : 'embedded', temporal: process.env.TEMPORAL_ADDRESS ? 'external' : 'dev server (in-memory SQLite)' },
  engine_env: BASE_ENV,
  failing_endpoint: failingEndpoint,
  seconds_total: round((performance.now() - started) / 1000),
  seconds_per_scenario: seconds,
  // Sampled from /proc/<pid>/status every 500 ms over the whole run.
  peak_rss_mb: Object.fromEntries(Object.entries(peak.peak).map(([k, v]) => [k, round(v)])),
  ...results,
  capacity: capacity(results),
  targets: { ...performanceTargets(results, sizes.latencyRate), correctness: correctness(results) },
};
const json = JSON.stringify(doc, null, 2);
process.stdout.write(json + '\n');
const dir = path.resolve('bench/results');
mkdirSync(dir, { recursive: true });
const file = path.join(dir, `${doc.date.replace(/[:.]/g, '-')}.json`);
writeFileSync(file, json + '\n');
// Beside it, each steady window's latencies by block: what `npm run bench:pool` pools across runs.
saveWindowBlocks(file, windowBlocks(results));
process.exit(doc.targets.correctness.met ? 0 : 1);
