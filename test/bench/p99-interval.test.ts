import { describe, expect, it } from 'vitest';
import { againstTarget, keepBlocks, type LatencyBlocks, p99OfBlocks, p99RatioInterval, pooledP99Ratio } from '../../bench/p99-interval';
import { percentiles } from '../../bench/receivers';

/** A window of `n` blocks of `size` latencies each, from `value(block, i)`. */
const windowOf = (n: number, value: (block: number, i: number) => number, size = 40) => {
  const blocks: LatencyBlocks = Array.from({ length: n }, (_, b) => Array.from({ length: size }, (_, i) => value(b, i)));
  const p = {};
  keepBlocks(p, blocks);
  return p;
};
// 10–29 ms, the same spread in every block.
const steady = (_b: number, i: number) => 10 + (i % 20);
const flat = windowOf(30, () => 10);

describe('p99RatioInterval (the bench failure scenario)', () => {
  it('takes the p99 as the bench does: the ceil(0.99·n)-th smallest', () => {
    // Every block holds 1..100, so every resample is the window itself: 3,000 values,
    // the 2,970th smallest is 99 (the 98th percentile would give 98, the maximum 100).
    const interval = p99RatioInterval(
      windowOf(30, (_b, i) => i + 1, 100),
      flat,
    )!;
    expect(interval[0]).toBeCloseTo(9.9, 10);
    expect(interval[1]).toBeCloseTo(9.9, 10);
  });

  it('gives an interval of 1 for two windows alike, below a 1.3 target', () => {
    const interval = p99RatioInterval(windowOf(30, steady), windowOf(30, steady))!;
    expect(interval).toEqual([1, 1]);
    expect(againstTarget(interval, 1.3)).toBe('below');
  });

  it('puts a window slower throughout above the target', () => {
    const interval = p99RatioInterval(
      windowOf(30, (b, i) => 1.5 * steady(b, i)),
      windowOf(30, steady),
    )!;
    expect(interval[0]).toBeGreaterThan(1.3);
    expect(againstTarget(interval, 1.3)).toBe('above');
  });

  it('calls a ratio made by one stalled block inconclusive, though its point estimate is far above the target', () => {
    // One 2-s block in which every delivery waited 100 ms: 40 of 1,200, more than the 1% the p99 looks at.
    const interval = p99RatioInterval(
      windowOf(30, (b, i) => (b === 7 ? 100 : steady(b, i))),
      windowOf(30, steady),
    )!;
    expect(interval[0]).toBeLessThanOrEqual(1.3);
    expect(interval[1]).toBeGreaterThan(3);
    expect(againstTarget(interval, 1.3)).toBe('inconclusive');
  });

  it('holds the middle 90% of the resampled ratios, not their extremes', () => {
    // Block b at 10 + b ms against a flat 10: a resample's p99 is its slowest block drawn,
    // so the ratio is (10 + max drawn)/10. The highest block is drawn in 64% of resamples
    // (upper end 3.9); the 5% quantile is block 27 or 28 (3.7–3.8), while the smallest of
    // 2,000 resamples falls near block 23.
    const interval = p99RatioInterval(
      windowOf(30, (b) => 10 + b),
      flat,
    )!;
    expect(interval[1]).toBeCloseTo(3.9, 10);
    expect(interval[0]).toBeGreaterThanOrEqual(3.6);
  });

  it('reports where the target falls against the unrounded interval', () => {
    expect(againstTarget([1.1, 1.304], 1.3)).toBe('inconclusive');
    expect(againstTarget([1.1, 1.3], 1.3)).toBe('below');
    expect(againstTarget([1.3001, 1.5], 1.3)).toBe('above');
    expect(againstTarget(undefined, 1.3)).toBeUndefined();
  });

  it('is the same for the same windows (seeded)', () => {
    // Distinct values, 10–50 ms, spread unevenly over the blocks.
    const noisy = (b: number, i: number) => 10 + ((b * 7919 + i * 104_729) % 4_001) / 100 + (b % 5) * (i % 3);
    const a = windowOf(30, noisy);
    const b = windowOf(30, (bl, i) => noisy(i, bl));
    const interval = p99RatioInterval(a, b)!;
    expect(interval[0]).toBeLessThan(interval[1]);
    expect(p99RatioInterval(a, b)).toEqual(interval);
  });

  it('skips blocks in which nothing was published, and gives nothing for too few blocks or none kept', () => {
    const blocks: LatencyBlocks = Array.from({ length: 30 }, (_, b) => Array.from({ length: 40 }, (_, i) => steady(b, i)));
    const sparse: LatencyBlocks = [...blocks.slice(0, 10), [], ...blocks.slice(10)];
    delete sparse[3];
    const withHoles = {};
    keepBlocks(withHoles, sparse);
    const whole = {};
    keepBlocks(whole, blocks.slice(0, 3).concat(blocks.slice(4)));
    expect(p99RatioInterval(withHoles, flat)).toEqual(p99RatioInterval(whole, flat));

    expect(p99RatioInterval(windowOf(14, steady), flat)).toBeUndefined();
    expect(p99RatioInterval({}, flat)).toBeUndefined();
  });
});

describe('pooledP99Ratio (npm run bench:pool)', () => {
  const blocksOf = (n: number, value: (block: number, i: number) => number, size = 40): LatencyBlocks =>
    Array.from({ length: n }, (_, b) => Array.from({ length: size }, (_, i) => value(b, i)));
  const noisy = (seed: number) => (b: number, i: number) => 10 + ((b * 7919 + i * 104_729 * seed) % 4_001) / 100 + (b === seed ? 30 : 0);

  it('of one run gives the interval the bench gave one run before pooling existed', () => {
    // Computed with bench/p99-interval.ts at 25e419c, before runs could be pooled.
    const one = (seed: number) => blocksOf(30, (b, i) => 10 + ((b * 7919 + i * 104_729 * seed) % 4_001) / 100 + (b === seed ? 40 : 0), 80);
    const p = (blocks: LatencyBlocks) => {
      const percentilesObject = {};
      keepBlocks(percentilesObject, blocks);
      return percentilesObject;
    };
    expect(p99RatioInterval(p(one(1)), p(one(4)))).toEqual([0.5936751317680883, 1.70137207425343]);
    expect(pooledP99Ratio([one(1)], [one(4)])!.interval).toEqual([0.5936751317680883, 1.70137207425343]);
  });

  it('takes each window’s p99 as the bench does', () => {
    const blocks = blocksOf(20, noisy(7), 55);
    expect(Math.round(p99OfBlocks(blocks))).toBe(percentiles(blocks.flat()).p99);
    // 30 blocks of 1..100: 3,000 values, the 2,970th smallest is 99.
    expect(p99OfBlocks(blocksOf(30, (_b, i) => i + 1, 100))).toBe(99);
  });

  it('is the geometric mean of the runs’ ratios, each run weighing the same whatever its hour', () => {
    // A quiet run whose window is 1.6× its baseline, and a run twice as slow throughout
    // whose window is 1.0× its baseline. The p99 of all their latencies together would
    // be the busy run's (58 / 58 ms: 1.0); each run weighing the same gives √1.6.
    const quietBase = blocksOf(30, steady);
    const busyBase = blocksOf(30, (b, i) => 2 * steady(b, i));
    const pooled = pooledP99Ratio([blocksOf(30, (b, i) => 1.6 * steady(b, i)), busyBase], [quietBase, busyBase])!;
    expect(pooled.ratio).toBeCloseTo(Math.sqrt(1.6), 10);
  });

  it('widens with the runs’ disagreement, which no run’s blocks show', () => {
    // Within each run every block is alike, so each run alone is sure of its ratio; two
    // runs that disagree (1.0 and 1.6) give an interval over both: the t interval of
    // their log ratios' mean, with one degree of freedom.
    const base = blocksOf(30, steady);
    const pooled = pooledP99Ratio([base, blocksOf(30, (b, i) => 1.6 * steady(b, i))], [base, base])!;
    const half = 6.314 * (Math.log(1.6) / Math.SQRT2 / Math.SQRT2);
    expect(pooled.interval[0]).toBeCloseTo(Math.exp(Math.log(1.6) / 2 - half), 10);
    expect(pooled.interval[1]).toBeCloseTo(Math.exp(Math.log(1.6) / 2 + half), 10);
    // Runs that agree: as sure as they are.
    expect(pooledP99Ratio([base, base, base], [base, base, base])).toEqual({ ratio: 1, interval: [1, 1] });
  });

  it('keeps each run’s window with its own baseline', () => {
    // Run 1: 2× its baseline; run 2: 1.5×. The mean is the same however windows and
    // baselines pair (the product of the ratios is), but the spread is not: held
    // against each other's baselines, the runs would say 1 and 3.
    const s = (k: number) => blocksOf(30, (b, i) => k * steady(b, i));
    const paired = pooledP99Ratio([s(2), s(3)], [s(1), s(2)])!;
    const swapped = pooledP99Ratio([s(2), s(3)], [s(2), s(1)])!;
    expect(paired.ratio).toBeCloseTo(Math.sqrt(3), 10);
    expect(swapped.ratio).toBeCloseTo(Math.sqrt(3), 10);
    expect(paired.interval[1] / paired.interval[0]).toBeCloseTo((2 / 1.5) ** 6.314, 8);
    expect(swapped.interval[1] / swapped.interval[0]).toBeCloseTo(3 ** 6.314, 8);
  });

  it('narrows with more runs', () => {
    const one = pooledP99Ratio([blocksOf(30, noisy(1))], [blocksOf(30, noisy(2))])!;
    const seeds = [1, 3, 5, 7, 9, 11];
    const six = pooledP99Ratio(
      seeds.map((s) => blocksOf(30, noisy(s))),
      seeds.map((s) => blocksOf(30, noisy(s + 1))),
    )!;
    expect(six.interval[1] - six.interval[0]).toBeLessThan(0.67 * (one.interval[1] - one.interval[0]));
  });

  it('gives nothing for unpaired runs, no runs, or a window too short to resample', () => {
    const w = blocksOf(30, steady);
    expect(pooledP99Ratio([w, w], [w])).toBeUndefined();
    expect(pooledP99Ratio([], [])).toBeUndefined();
    expect(pooledP99Ratio([w, blocksOf(14, steady)], [w, w])).toBeUndefined();
  });
});
