import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { againstTarget, type LatencyBlocks, pooledP99, pooledP99Ratio } from './p99-interval';
import { round } from './processes';
import { P99_RATIO_TARGET } from './targets';
import { loadWindowBlocks, type WindowBlocks, type WindowName } from './window-blocks';

/**
 * `npm run bench:pool -- bench/results/<date>.json …`
 * The failure target (issue #14) over several runs. One 60-s window's p99 is its 24th
 * slowest delivery, and the bench's 90% interval for one run's ratio is ±0.2–0.5 wide:
 * too wide to tell 1.2 from 1.4. This pools the runs' windows: each failure window's
 * latencies with the others', each baseline's with the others', and gives the ratio of
 * the two p99s with its interval (runs resampled each within itself). Each window is
 * held against the same baseline as in `targets`: the first against the latency
 * scenario, the second against the no-failure window a minute after it. Only runs of
 * the same load and failing endpoint pool; files without a latency-blocks file beside
 * them (runs before it was saved) are skipped, with a line saying so.
 */
const { positionals } = parseArgs({ allowPositionals: true });
const files = positionals.filter((f) => f.endsWith('.json') && !f.endsWith('.latency-blocks.json'));
if (files.length === 0) {
  console.error('usage: npm run bench:pool -- bench/results/<date>.json … (runs with the latency and failure scenarios)');
  process.exit(2);
}

const COMPARISONS = {
  first_window: (w: WindowBlocks) => [w.failure, w.latency],
  while_earlier_retries_due: (w: WindowBlocks) => [w['failure.while_earlier_retries_due'], w['failure.no_failure_after'] ?? w.latency],
} satisfies Record<string, (w: WindowBlocks) => (LatencyBlocks | undefined)[]>;
type Comparison = keyof typeof COMPARISONS;

const runs: { file: string; date: string; load: string; blocks: WindowBlocks }[] = [];
for (const file of files) {
  const doc = JSON.parse(readFileSync(file, 'utf8')) as {
    date: string;
    sizes: { latencyRate: number; latencySeconds: number };
    engine_env: { SHIPHOOK_ATTEMPT_TIMEOUT: string };
    failing_endpoint?: string;
  };
  let blocks: WindowBlocks;
  try {
    blocks = loadWindowBlocks(file);
  } catch {
    console.error(`[pool] ${basename(file)}: no latency-blocks file beside it, skipped`);
    continue;
  }
  if (!blocks.failure) {
    console.error(`[pool] ${basename(file)}: no failure window, skipped`);
    continue;
  }
  const load = `${doc.sizes.latencyRate} events/s × ${doc.sizes.latencySeconds} s, failing endpoint ${doc.failing_endpoint ?? '?'}, attempt timeout ${doc.engine_env.SHIPHOOK_ATTEMPT_TIMEOUT}`;
  runs.push({ file: basename(file), date: doc.date, load, blocks });
}
const loads = new Set(runs.map((r) => r.load));
if (loads.size > 1) {
  console.error(`[pool] runs of different loads do not pool: ${[...loads].join('; ')}`);
  process.exit(2);
}

const pooled = Object.fromEntries(
  (Object.keys(COMPARISONS) as Comparison[]).map((name) => {
    const pairs = runs.map((r) => COMPARISONS[name](r.blocks)).filter((p): p is LatencyBlocks[] => p.every(Boolean));
    const windows = pairs.map((p) => p[0]!);
    const bases = pairs.map((p) => p[1]!);
    const result = pooledP99Ratio(windows, bases);
    if (!result) return [name, { runs: pairs.length, note: 'no run with this window (or a window too short to resample)' }];
    return [
      name,
      {
        runs: pairs.length,
        deliveries: { window: windows.flat(2).length, baseline: bases.flat(2).length },
        window_p99_ms: round(pooledP99(windows)),
        baseline_p99_ms: round(pooledP99(bases)),
        p99_ratio: round(result.ratio, 2),
        p99_ratio_90pct_interval: result.interval.map((r) => round(r, 2)),
        p99_ratio_vs_1_3: againstTarget(result.interval, P99_RATIO_TARGET),
        // Each run's own ratio, for comparison with the pooled one.
        per_run_p99_ratios: pairs.map((p) => round(pooledP99([p[0]!]) / pooledP99([p[1]!]), 2)),
      },
    ];
  }),
) as Record<Comparison, { runs: number; p99_ratio?: number; p99_ratio_vs_1_3?: string }>;

const verdicts = Object.values(pooled).map((c) => c.p99_ratio_vs_1_3);
const verdict = verdicts.some((v) => v === undefined) ? null : verdicts.every((v) => v === 'below') ? 'met' : verdicts.some((v) => v === 'above') ? 'not met' : 'inconclusive: pool more runs';
const doc = {
  runs: runs.map(({ file, date }) => ({ file, date })),
  load: [...loads][0] ?? null,
  pooled,
  target: {
    target: `healthy p99 ≤ ${P99_RATIO_TARGET}× the no-failure p99 in both windows, pooled over the runs`,
    now: Object.fromEntries(Object.entries(pooled).map(([k, c]) => [k, c.p99_ratio ?? null])),
    // Met when both pooled intervals lie at or below the target, not met when either lies above it.
    verdict,
  },
};
process.stdout.write(JSON.stringify(doc, null, 2) + '\n');
