import { describe, expect, it } from 'vitest';
import { againstTarget, keepBlocks, type LatencyBlocks, p99RatioInterval } from '../../bench/p99-interval';

/** `n` blocks of 40 latencies each, from `value(block, i)`. */
const windowOf = (n: number, value: (block: number, i: number) => number): { p: object; blocks: LatencyBlocks } => {
  const blocks = Array.from({ length: n }, (_, b) => Array.from({ length: 40 }, (_, i) => value(b, i)));
  const p = {};
  keepBlocks(p, blocks);
  return { p, blocks };
};
// 10–29 ms, the same spread in every block.
const steady = (_b: number, i: number) => 10 + (i % 20);

describe('p99RatioInterval (the bench failure scenario)', () => {
  it('gives an interval of 1 for two windows alike, below a 1.3 target', () => {
    const a = windowOf(30, steady);
    const b = windowOf(30, steady);
    const interval = p99RatioInterval(a.p, b.p)!;
    expect(interval).toEqual([1, 1]);
    expect(againstTarget(interval, 1.3)).toBe('below');
  });

  it('puts a window slower throughout above the target', () => {
    const slow = windowOf(30, (b, i) => 1.5 * steady(b, i));
    const base = windowOf(30, steady);
    const interval = p99RatioInterval(slow.p, base.p)!;
    expect(interval[0]).toBeGreaterThan(1.3);
    expect(againstTarget(interval, 1.3)).toBe('above');
  });

  it('calls a ratio made by one stalled block inconclusive, though its point estimate is far above the target', () => {
    // One 2-s block in which every delivery waited 100 ms: 40 of 1,200, more than the 1% the p99 looks at.
    const stalled = windowOf(30, (b, i) => (b === 7 ? 100 : steady(b, i)));
    const base = windowOf(30, steady);
    const interval = p99RatioInterval(stalled.p, base.p)!;
    expect(interval[0]).toBeLessThanOrEqual(1.3);
    expect(interval[1]).toBeGreaterThan(3);
    expect(againstTarget(interval, 1.3)).toBe('inconclusive');
  });

  it('is the same for the same windows (seeded), and absent when a window kept no blocks', () => {
    const a = windowOf(30, (b, i) => steady(b, i) + (b % 3) * 4);
    const b = windowOf(30, steady);
    expect(p99RatioInterval(a.p, b.p)).toEqual(p99RatioInterval(a.p, b.p));
    expect(p99RatioInterval({}, b.p)).toBeUndefined();
    expect(againstTarget(undefined, 1.3)).toBeUndefined();
  });
});
