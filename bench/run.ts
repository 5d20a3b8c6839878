import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { burst, settle, steadyLoad } from './delivery-scenarios';
import { floor } from './floor-scenario';
import { memorySampler, round } from './processes';
import { retry } from './retry-scenario';
import { saturation } from './saturation-scenario';
import { batchPublish } from './batch-scenario';
import { soak, SOAK_ENV } from './soak-scenario';
import { correctness, performanceTargets } from './targets';
import { type BenchSystem, startBenchSystem, TOPOLOGIES, type Topology } from './system';

/**
 * Starts the system (embedded services unless DATABASE_URL/TEMPORAL_ADDRESS are set) with
 * separate api and worker processes, runs the scenarios in order and prints one JSON
 * document, also written to bench/results/<date>.json, ending with the targets and the
 * correctness check. Every wait is bounded, so a slow engine yields a partial result
 * instead of a hung run. Exits 1 when an event was lost or not completed; a performance
 * target not met does not change the exit code. What each scenario is for: docs/performance.md.
 */
const ALL = ['floor', 'burst', 'latency', 'failure', 'retry', 'saturation'];
/** Run only when named (`npm run bench -- soak`, or with --only). */
const OPT_IN = ['batch', 'soak'];
const USAGE = `npm run bench -- [scenario…] [--quick] [--only ${[...ALL, ...OPT_IN].join(',')}] [--topology machine|npm-start|compose] [--temporal-memory] [--minutes M] [--events N] [--rate R] [--seconds S] [--failing-endpoint 500|hang] [--attempt-timeout 15s] [--retry-events N] [--saturation-rate R] [--saturation-seconds S] [--profile]`;
const { values, positionals } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    only: { type: 'string' },
    events: { type: 'string' }, // burst size (and the floor's)
    rate: { type: 'string' }, // latency and failure: events/s offered
    seconds: { type: 'string' }, // latency and failure: duration
    'failing-endpoint': { type: 'string' }, // failure: 500 (default) or hang (never answers)
    'attempt-timeout': { type: 'string' }, // the engine's SHIPHOOK_ATTEMPT_TIMEOUT (default 5s; production's is 15s)
    'retry-events': { type: 'string' }, // retry: events whose later attempts are measured
    'saturation-rate': { type: 'string' }, // saturation: events/s offered (default: twice the burst's end-to-end rate)
    'saturation-seconds': { type: 'string' }, // saturation: seconds of publishing
    profile: { type: 'boolean' }, // api and workers write V8 CPU profiles to bench/results/profiles-<date>/
    topology: { type: 'string' }, // which processes run (bench/system.ts): machine (default), npm-start, compose
    'temporal-memory': { type: 'boolean' }, // the dev server's store in memory instead of a file (whose growth the storage figures include)
    minutes: { type: 'string' }, // soak: duration (default SOAK_MINUTES or 60)
    help: { type: 'boolean' },
  },
  allowPositionals: true,
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const named = [...positionals, ...(values.only ? values.only.split(',').map((s) => s.trim()) : [])];
const selected = new Set(named.length ? named : ALL);
for (const s of selected) if (![...ALL, ...OPT_IN].includes(s)) throw new Error(`unknown scenario "${s}"; one of ${[...ALL, ...OPT_IN].join(', ')}`);
// The soak's engine runs with retention of minutes and a short retry schedule (SOAK_ENV), which the other scenarios' figures must not have.
if (selected.has('soak') && selected.size > 1) throw new Error('the soak runs alone: npm run bench -- soak [--minutes M]');
const failingEndpoint = values['failing-endpoint'] ?? '500';
if (failingEndpoint !== '500' && failingEndpoint !== 'hang') {
  console.error(`--failing-endpoint must be 500 or hang\n${USAGE}`);
  process.exit(2);
}

const topology = (values.topology ?? 'machine') as Topology;
if (!TOPOLOGIES.includes(topology)) {
  console.error(`--topology must be one of ${TOPOLOGIES.join(', ')}\n${USAGE}`);
  process.exit(2);
}

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
  retryEvents: num(values['retry-events'], quick ? 60 : 300, 'retry-events'),
  retryPublishRate: quick ? 20 : 50,
  saturationRate: values['saturation-rate'] === undefined ? undefined : num(values['saturation-rate'], 0, 'saturation-rate'),
  saturationSeconds: num(values['saturation-seconds'], quick ? 15 : 60, 'saturation-seconds'),
  saturationSampleSeconds: quick ? 2 : 5,
  soakMinutes: num(values.minutes ?? process.env.SOAK_MINUTES, 60, 'minutes'),
  soakRate: num(values.rate, 20, 'rate'),
};
// Time bounds (ms) on every wait, so that a slow engine yields a partial result instead of a hung run.
const budget = {
  burstWait: quick ? 60_000 : 240_000,
  latencyWait: quick ? 30_000 : 60_000,
  settle: quick ? 30_000 : 45_000,
  retryWait: quick ? 30_000 : 60_000,
  saturationDrain: quick ? 120_000 : 360_000,
  // After a recovery the replayed events (one URL each) are delivered again: thousands in a full run.
  replaySettle: quick ? 60_000 : 180_000,
};

// The production retry schedule (5s, 5m, 30m, …): the failure and saturation scenarios
// measure what a failing endpoint costs in production. The retry scenario sets its own.
const BASE_ENV = { SHIPHOOK_ATTEMPT_TIMEOUT: values['attempt-timeout'] ?? '5s', SHIPHOOK_DISABLE_AFTER_FAILURES: '1000000', ...(selected.has('soak') ? SOAK_ENV : {}) };
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
if (profileDir) log(`CPU profiles of api and workers go to ${profileDir} (open them in Chrome DevTools)`);
// A process that died makes every figure after it meaningless (and its waits may never end): stop.
const died = (reason: string) => {
  log(`${reason}; stopping the system, no results`);
  void stopSystem().finally(() => process.exit(1));
};
// The soak measures the store's growth: in a file.
sys = await startBenchSystem(BASE_ENV, { profileDir, onDied: died, topology, temporalMemory: values['temporal-memory'] === true && !selected.has('soak') });
const memory = memorySampler(() => sys!.processes());
const results: Record<string, Record<string, unknown>> = {};
const seconds: Record<string, number> = {};
const step = async (name: string, fn: (s: BenchSystem) => Promise<Record<string, unknown>>) => {
  if (!selected.has(name)) return;
  log(name);
  const t0 = performance.now();
  await memory.scenario(); // the peaks from here on are this scenario's
  try {
    results[name] = await fn(sys!);
  } catch (err) {
    results[name] = { error: String((err as Error).stack ?? err).slice(0, 500) };
  }
  results[name].peak_pss_mb = await memory.scenario();
  // Leftover deliveries of this scenario must not load the next one.
  const quiet = await settle(sys!, budget.settle).catch(() => null);
  if (quiet && quiet.still_running) log(`${quiet.still_running} deliveries still running after ${name}`);
  seconds[name] = round((performance.now() - t0) / 1000);
};
const load = { rate: sizes.latencyRate, seconds: sizes.latencySeconds, waitMs: budget.latencyWait };
const burstRate = () => results.burst?.events_per_second_end_to_end as number | undefined;

try {
  await step('floor', (s) => floor(s, sizes.burstEvents, budget.burstWait));
  await step('burst', async (s) => {
    const b = await burst(s, sizes.burstEvents, budget.burstWait);
    const floorRate = results.floor?.workflows_per_second as number | undefined;
    return { ...b, engine_to_floor: floorRate ? round(b.events_per_second_end_to_end / floorRate, 2) : 'run with the floor scenario to compare' };
  });
  await step('latency', (s) => steadyLoad(s, { ...load, settleMs: budget.settle }));
  await step('failure', (s) => steadyLoad(s, { ...load, settleMs: budget.replaySettle }, failingEndpoint));
  await step('retry', (s) => retry(s, { events: sizes.retryEvents, rate: sizes.retryPublishRate, waitMs: budget.retryWait, windowMs: budget.retryWait, settleMs: 60_000 }));
  await step('saturation', (s) => {
    // More than the system takes: twice what the burst measured end to end.
    const rate = sizes.saturationRate ?? (burstRate() ? round(2 * burstRate()!) : 100);
    return saturation(s, { rate, seconds: sizes.saturationSeconds, sampleMs: sizes.saturationSampleSeconds * 1000, drainMs: budget.saturationDrain, settleMs: budget.replaySettle, burstRate: burstRate() });
  });
  await step('batch', (s) => batchPublish(s, { events: Math.max(1000, sizes.burstEvents), waitMs: budget.burstWait, settleMs: budget.settle }));
  await step('soak', (s) => soak(s, { minutes: sizes.soakMinutes, rate: sizes.soakRate, sampleMs: 60_000, settleMs: budget.replaySettle }));
} finally {
  memory.stop();
  await stopSystem();
}

const doc = {
  date: new Date().toISOString(),
  command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
  machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, memory_gb: round(os.totalmem() / 2 ** 30), node: process.version, load_average_1m_at_end: round(os.loadavg()[0]!, 2) },
  mode: quick ? 'quick' : 'full',
  sizes,
  budgets_ms: budget,
  services: { topology, postgres: process.env.DATABASE_URL ? 'external' : 'embedded', temporal: process.env.TEMPORAL_ADDRESS ? 'external' : `dev server, store ${sys.temporalDbFile ? 'in a file' : 'in memory'}` },
  engine_env: BASE_ENV,
  seconds_total: round((performance.now() - started) / 1000),
  seconds_per_scenario: seconds,
  // PSS sampled from /proc over the whole run (each scenario reports its own).
  peak_pss_mb: memory.run(),
  ...results,
  targets: { ...performanceTargets(results, sizes.latencyRate), correctness: correctness(results) },
};
const json = JSON.stringify(doc, null, 2);
process.stdout.write(json + '\n');
const dir = path.resolve('bench/results');
mkdirSync(dir, { recursive: true });
writeFileSync(path.join(dir, `${doc.date.replace(/[:.]/g, '-')}.json`), json + '\n');
process.exit(doc.targets.correctness.met ? 0 : 1);
