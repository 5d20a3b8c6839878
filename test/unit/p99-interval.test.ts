import { describe, expect, it } from 'vitest';
import { againstTarget, keepBlocks, type LatencyBlocks, p99RatioInterval, pooledP99, pooledP99Ratio } from '../../bench/p99-interval';

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

  it('of one run is that run: the same ratio and interval as the bench gives it', () => {
    const w = blocksOf(30, noisy(3));
    const b = blocksOf(30, noisy(5));
    const pw = {};
    const pb = {};
    keepBlocks(pw, w);
    keepBlocks(pb, b);
    const pooled = pooledP99Ratio([w], [b])!;
    expect(pooled.interval).toEqual(p99RatioInterval(pw, pb));
    expect(pooled.ratio).toBeCloseTo(pooledP99([w]) / pooledP99([b]), 12);
  });

  it('takes the p99 of all the runs’ latencies together', () => {
    // 30 blocks of 1..100 and 30 of 101..200: 6,000 values, the 5,940th smallest is 198.
    expect(pooledP99([blocksOf(30, (_b, i) => i + 1, 100), blocksOf(30, (_b, i) => i + 101, 100)])).toBe(198);
  });

  it('resamples each run within itself, so a busy run moves both sides of its ratio together', () => {
    // Two runs, one twice as slow throughout as the other, each window like its baseline.
    // Within a run every block is alike, so a resample within runs is the runs themselves
    // (ratio exactly 1); drawing blocks from both runs at once would mix them and spread it.
    const quiet = blocksOf(30, steady);
    const busy = blocksOf(30, (b, i) => 2 * steady(b, i));
    expect(pooledP99Ratio([quiet, busy], [quiet, busy])).toEqual({ ratio: 1, interval: [1, 1] });
  });

  it('narrows with more runs', () => {
    const one = pooledP99Ratio([blocksOf(30, noisy(1))], [blocksOf(30, noisy(2))])!;
    const seeds = [1, 3, 5, 7, 9, 11];
    const six = pooledP99Ratio(
      seeds.map((s) => blocksOf(30, noisy(s))),
      seeds.map((s) => blocksOf(30, noisy(s + 1))),
    )!;
    // Each run has a stalled block, so the pooled tail still hangs on how often they are drawn:
    // not the √6 of independent samples, but a third narrower at least (here 0.82 → 0.52).
    expect(six.interval[1] - six.interval[0]).toBeLessThan(0.67 * (one.interval[1] - one.interval[0]));
  });

  it('gives nothing for unpaired runs, no runs, or a window too short to resample', () => {
    const w = blocksOf(30, steady);
    expect(pooledP99Ratio([w, w], [w])).toBeUndefined();
    expect(pooledP99Ratio([], [])).toBeUndefined();
    expect(pooledP99Ratio([w, blocksOf(14, steady)], [w, w])).toBeUndefined();
  });
});
