import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { burst, settle, steadyLoad } from './delivery-scenarios';
import { LAB, type LabContext } from './lab';
import { startOtlpReceiver } from '../src/launcher/otlp-receiver';
import { memorySampler, round } from './processes';
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
/** What the targets read (bench/targets.ts); the lab's scenarios (bench/lab/) run only when named. */
const SCENARIOS: Record<string, string> = {
  burst: 'N events × 3 webhooks as fast as the API takes them (--events)',
  latency: 'steady load to 3 healthy webhooks (--rate, --seconds): latency, CPU per event, memory',
  failure: 'the latency load with 1 of 3 endpoints failing, then a replay of what still retries',
};
/** Flags that take a value, and their help; the lab's scenarios add their own. */
const FLAGS: Record<string, string> = {
  only: 'scenarios, comma-separated (or name them as arguments)',
  events: 'burst size (default 2000; --quick 200)',
  rate: 'events/s offered by latency and failure (default 20; --quick 10)',
  seconds: 'their duration (default 60; --quick 10)',
  'failing-endpoint': 'failure: 500 (default) or hang (never answers)',
  subscribed: 'latency: how many of its 3 webhooks take the published type (default 3; the others subscribe elsewhere)',
  'attempt-timeout': "the engine's SHIPHOOK_ATTEMPT_TIMEOUT (default 5s; production's is 15s)",
  topology: 'machine (default), npm-start or compose: which processes run (bench/system.ts)',
  ...Object.assign({}, ...Object.values(LAB).map((s) => s.flags ?? {})),
};
const SWITCHES: Record<string, string> = {
  quick: 'small sizes: a few minutes',
  'temporal-memory': "the dev server's store in memory instead of a file (whose growth the storage figures include)",
  profile: 'api and workers write V8 CPU profiles to bench/results/profiles-<date>/',
  otel: 'api and workers export traces (OTLP, http/protobuf) to a local receiver that only counts them: what tracing costs',
  help: 'this',
};
const USAGE = [
  'npm run bench -- [scenario…] [--flag…]',
  'scenarios (default: all of these):',
  ...Object.entries(SCENARIOS).map(([name, about]) => `  ${name.padEnd(12)}${about}`),
  'opt-in, run only when named (bench/lab/):',
  ...Object.entries(LAB).map(([name, s]) => `  ${name.padEnd(12)}${s.about}`),
  'flags:',
  ...Object.entries(SWITCHES).map(([name, help]) => `  --${name.padEnd(22)}${help}`),
  ...Object.entries(FLAGS).map(([name, help]) => `  --${`${name} X`.padEnd(22)}${help}`),
].join('\n');
const { values, positionals } = parseArgs({
  options: {
    ...Object.fromEntries(Object.keys(FLAGS).map((name) => [name, { type: 'string' as const }])),
    ...Object.fromEntries(Object.keys(SWITCHES).map((name) => [name, { type: 'boolean' as const }])),
  },
  allowPositionals: true,
});
const flag = (name: string) => values[name] as string | undefined;
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
function usageError(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}
const named = [...positionals, ...(flag('only')?.split(',').map((s) => s.trim()) ?? [])];
const selected = new Set(named.length ? named : Object.keys(SCENARIOS));
for (const s of selected) if (!(s in SCENARIOS) && !(s in LAB)) usageError(`unknown scenario "${s}"`);
// A lab scenario with engine settings of its own (the soak's retention of minutes) runs alone: the others' figures must not have them.
const alone = [...selected].find((s) => LAB[s]?.env);
if (alone && selected.size > 1) usageError(`${alone} runs alone: npm run bench -- ${alone}`);
const failingEndpoint = flag('failing-endpoint') ?? '500';
if (failingEndpoint !== '500' && failingEndpoint !== 'hang') usageError('--failing-endpoint must be 500 or hang');
const subscribed = Number(flag('subscribed') ?? 3);
if (![1, 2, 3].includes(subscribed)) usageError('--subscribed must be 1, 2 or 3');
const topology = (flag('topology') ?? 'machine') as Topology;
if (!TOPOLOGIES.includes(topology)) usageError(`--topology must be one of ${TOPOLOGIES.join(', ')}`);

const quick = values.quick === true;
const number = (name: string, fallback: number) => {
  const text = flag(name);
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!(n > 0)) usageError(`--${name} must be a positive number`);
  return n;
};
const sizes = { burstEvents: number('events', quick ? 200 : 2000), latencyRate: number('rate', quick ? 10 : 20), latencySeconds: number('seconds', quick ? 10 : 60) };
// Time bounds (ms) on every wait, so that a slow engine yields a partial result instead of a hung run.
const budget = {
  burstWait: quick ? 60_000 : 240_000,
  latencyWait: quick ? 30_000 : 60_000,
  settle: quick ? 30_000 : 45_000,
  // After a recovery the replayed events (one URL each) are delivered again: thousands in a full run.
  replaySettle: quick ? 60_000 : 180_000,
};

// The production retry schedule (5s, 5m, 30m, …): the failure scenario measures what a
// failing endpoint costs in production. A lab scenario may set its own.
// --otel: the standard variables an operator sets, pointed at a receiver that answers and counts.
const otlp = values.otel ? await startOtlpReceiver({ keep: false }) : undefined;
const OTEL_ENV: Record<string, string> = otlp ? { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' } : {};
const BASE_ENV = { SHIPHOOK_ATTEMPT_TIMEOUT: flag('attempt-timeout') ?? '5s', SHIPHOOK_DISABLE_AFTER_FAILURES: '1000000', ...OTEL_ENV, ...(alone ? LAB[alone]!.env : {}) };
const log = (msg: string) => process.stderr.write(`[bench] ${new Date().toISOString().slice(11, 19)} ${msg}\n`);

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
sys = await startBenchSystem(BASE_ENV, { profileDir, onDied: died, topology, temporalMemory: values['temporal-memory'] === true });
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
const lab: LabContext = { quick, number, results };

try {
  await step('burst', (s) => burst(s, sizes.burstEvents, budget.burstWait));
  await step('latency', (s) => steadyLoad(s, { ...load, settleMs: budget.settle, subscribed }));
  await step('failure', (s) => steadyLoad(s, { ...load, settleMs: budget.replaySettle }, failingEndpoint));
  for (const [name, scenario] of Object.entries(LAB)) await step(name, (s) => scenario.run(s, lab));
} finally {
  memory.stop();
  await stopSystem();
  await otlp?.close();
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
  // What the receiver got (the processes send their last spans as they stop).
  ...(otlp ? { traces_exported: { requests: otlp.counts().requests, mb: round(otlp.counts().bytes / 2 ** 20) } } : {}),
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
