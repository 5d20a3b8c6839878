import { againstTarget, enoughBlocks, type LatencyBlocks, p99OfBlocks, pooledP99Ratio } from './p99-interval';
import { round } from './processes';
import { FAILURE_COMPARISONS, field, P99_RATIO_TARGET, STEADY_WINDOWS, type WindowName } from './targets';
import type { WindowBlocks } from './window-blocks';

/**
 * The failure target (issue #14) over several runs: the geometric mean of the runs'
 * p99 ratios, each run weighing the same, with its 90% interval over the runs
 * (bench/p99-interval.ts), and a verdict on 1.3. Windows pair as in
 * `targets` (FAILURE_COMPARISONS). A window that lost deliveries (not received within
 * the bench's wait: the slowest ones, which would bias its p99 low), had publish errors
 * or too few blocks is left out, and its run with it for that comparison; the second
 * window then falls back to the next baseline, as `targets` does.
 */
export interface PoolRun {
  file: string;
  results: Record<string, unknown>;
  blocks: WindowBlocks;
}

type Comparison = keyof typeof FAILURE_COMPARISONS;

/** Why a window cannot be pooled, or undefined when it can. */
function unusable(run: PoolRun, window: WindowName): string | undefined {
  const blocks = run.blocks[window];
  if (!blocks) return `no ${window} window`;
  if (!enoughBlocks(blocks)) return `${window}: ${(blocks as LatencyBlocks).length} blocks, too few to resample`;
  const count = (key: string) => field(run.results, ...STEADY_WINDOWS[window], key);
  if (count('not_received_within_wait') !== 0) return `${window}: deliveries not received within the wait`;
  if (count('publish_errors') !== 0) return `${window}: publish errors`;
  return undefined;
}

function poolComparison(runs: PoolRun[], name: Comparison) {
  const { window, baselines } = FAILURE_COMPARISONS[name];
  const pairs: { file: string; baseline: WindowName; window: LatencyBlocks; base: LatencyBlocks }[] = [];
  const leftOut: { file: string; why: string }[] = [];
  for (const run of runs) {
    const why = unusable(run, window);
    const baseline = baselines.find((b) => unusable(run, b) === undefined);
    if (why || !baseline) leftOut.push({ file: run.file, why: why ?? baselines.map((b) => unusable(run, b)).join('; ') });
    else pairs.push({ file: run.file, baseline, window: run.blocks[window]!, base: run.blocks[baseline]! });
  }
  const result = pooledP99Ratio(
    pairs.map((p) => p.window),
    pairs.map((p) => p.base),
  );
  return {
    runs: pairs.length,
    ...(result
      ? {
          p99_ratio: round(result.ratio, 2),
          p99_ratio_90pct_interval: result.interval.map((r) => round(r, 2)),
          p99_ratio_vs_1_3: againstTarget(result.interval, P99_RATIO_TARGET)!,
        }
      : {}),
    // Each run's own, from unrounded p99s (its JSON divides p99s rounded to the ms, a few hundredths apart).
    per_run: pairs.map((p) => {
      const [window, base] = [p99OfBlocks(p.window), p99OfBlocks(p.base)];
      return { file: p.file, baseline: p.baseline, window_p99_ms: round(window), baseline_p99_ms: round(base), p99_ratio: round(window / base, 2) };
    }),
    ...(leftOut.length ? { left_out: leftOut } : {}),
  };
}

export function poolRuns(runs: PoolRun[]) {
  const pooled = { first_window: poolComparison(runs, 'first_window'), while_earlier_retries_due: poolComparison(runs, 'while_earlier_retries_due') };
  const verdicts = Object.values(pooled).flatMap((c) => ('p99_ratio_vs_1_3' in c ? [c.p99_ratio_vs_1_3] : []));
  // Met when every pooled interval lies at or below the target (each one-sided at 95%);
  // not met when one lies above it (with two windows, a 10% chance of a false alarm).
  const verdict = verdicts.length === 0 ? null : verdicts.includes('above') ? 'not met' : verdicts.every((v) => v === 'below') ? 'met' : 'inconclusive: pool more runs';
  return {
    pooled,
    target: {
      target: `healthy p99 ≤ ${P99_RATIO_TARGET}× the no-failure p99 in both windows, pooled over the runs`,
      now: Object.fromEntries(Object.entries(pooled).map(([k, c]) => [k, 'p99_ratio' in c ? c.p99_ratio : null])),
      verdict,
      ...(verdicts.length === 1 && !('p99_ratio' in pooled.while_earlier_retries_due) ? { note: 'second window in no run (quick mode without --failure-second-window): first window only' } : {}),
    },
  };
}
