/**
 * How sure a window's p99 ratio is. A 60-s failure window's p99 is its 24th slowest of
 * ~2,400 deliveries (a baseline's, with three receivers, its 36th of ~3,600), and a
 * moment when the machine stalls holds several of them at once, so the ratio of two
 * windows' p99s moves run to run by more than the 1.3× it is held to. A block
 * bootstrap says how far it could move from the windows' own sampling: each window is
 * cut into BLOCK_MS blocks of publish time (a stall stays inside its block), blocks are
 * drawn with replacement into as many as the window had, and the ratio of the two
 * resampled p99s is taken, ITERATIONS times. Two things one run's interval does not
 * cover: latencies that depend on each other for longer than a block (a queue left by a
 * stall), which make the interval too narrow; and the machine drifting between two
 * windows minutes apart, which the failure scenario's two no-failure windows show.
 * Pooling several runs (`npm run bench:pool`) draws the runs too, so the drift of each
 * run's pair of windows enters the pooled interval.
 */

/** Latencies (ms) of a window, by block of publish time. */
export type LatencyBlocks = number[][];

export const BLOCK_MS = 2_000;
/** Fewer blocks than this (a short window) give no interval: too few to resample. */
const MIN_BLOCKS = 15;
const ITERATIONS = 2_000;
/** Two-sided: the interval holds the middle 90% of the resampled ratios. */
const LEVEL = 0.9;

/**
 * The blocks of each window's latencies, keyed by the `latency_ms` percentiles object
 * of its stats (kept out of the JSON: the percentiles travel through the scenarios'
 * results, and the ratios are taken where two of them meet).
 */
const blocksOf = new WeakMap<object, LatencyBlocks>();

export function keepBlocks(percentiles: object, blocks: LatencyBlocks): void {
  blocksOf.set(
    percentiles,
    blocks.filter((b) => b && b.length > 0),
  );
}

/** The same definition as `percentiles` (bench/receivers.ts): the ceil(0.99·n)-th smallest. */
function p99(values: Float64Array): number {
  values.sort();
  return values[Math.min(values.length - 1, Math.ceil(0.99 * values.length) - 1)]!;
}

/** A seeded generator (mulberry32), so that the same windows give the same interval. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One resample of a window: as many blocks as it has, drawn with replacement. */
function resampledP99(blocks: LatencyBlocks, next: () => number): number {
  const drawn: number[][] = [];
  let n = 0;
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[Math.floor(next() * blocks.length)]!;
    drawn.push(b);
    n += b.length;
  }
  const values = new Float64Array(n);
  let at = 0;
  for (const b of drawn) for (const v of b) values[at++] = v;
  return p99(values);
}

/** The geometric mean: ratios of 0.8 and 1.25 average to 1 (one value is itself, unrounded by exp∘log). */
const geometricMean = (values: number[]) => (values.length === 1 ? values[0]! : Math.exp(values.reduce((sum, v) => sum + Math.log(v), 0) / values.length));

/**
 * The 90% interval of the geometric mean over runs of p99(window) / p99(base), each
 * window resampled by its blocks. With several runs (`windows[i]` held against
 * `bases[i]`), each resample first draws as many runs as there are, with replacement,
 * so that how far the runs differ from each other (a busy hour, the drift between a
 * window and its baseline) widens the interval too; one run is resampled by its blocks
 * alone, as the bench does for each run.
 */
function ratioInterval(windows: LatencyBlocks[], bases: LatencyBlocks[]): [number, number] {
  const next = random(0x5eed);
  const ratios = new Float64Array(ITERATIONS);
  const runs = windows.length;
  for (let i = 0; i < ITERATIONS; i++) {
    const drawn = runs === 1 ? [0] : Array.from({ length: runs }, () => Math.floor(next() * runs));
    ratios[i] = geometricMean(drawn.map((r) => resampledP99(windows[r]!, next) / resampledP99(bases[r]!, next)));
  }
  ratios.sort();
  const tail = (1 - LEVEL) / 2;
  const at = (q: number) => ratios[Math.min(ITERATIONS - 1, Math.floor(q * ITERATIONS))]!;
  return [at(tail), at(1 - tail)];
}

/** Enough blocks to resample (bench/pool.ts leaves out a window with fewer). */
export const enoughBlocks = (blocks: LatencyBlocks | undefined): blocks is LatencyBlocks => !!blocks && blocks.length >= MIN_BLOCKS;

/**
 * The 90% interval of the p99 ratio `window / base`, unrounded, or undefined when
 * either window's blocks were not kept or are too few to resample.
 */
export function p99RatioInterval(window: object, base: object): [number, number] | undefined {
  const w = blocksFor(window);
  const b = blocksFor(base);
  return enoughBlocks(w) && enoughBlocks(b) ? ratioInterval([w], [b]) : undefined;
}

/** A window's p99 from its blocks, as the bench takes it. */
export function p99OfBlocks(blocks: LatencyBlocks): number {
  return p99(Float64Array.from(blocks.flat()));
}

/** The blocks kept for a window's percentiles (what bench/run.ts saves for pooling runs). */
export function blocksFor(percentiles: object): LatencyBlocks | undefined {
  return blocksOf.get(percentiles);
}

/**
 * Several runs pooled (bench/pool.ts): the geometric mean of the runs' p99 ratios, each
 * run weighing the same whatever its hour (the p99 of all their latencies together would
 * be the busiest run's), and its 90% interval (runs drawn, then each window by its
 * blocks: a two-stage bootstrap). `windows[i]` was held against `bases[i]`. Undefined
 * when there is no run or a window has too few blocks.
 */
export function pooledP99Ratio(windows: LatencyBlocks[], bases: LatencyBlocks[]): { ratio: number; interval: [number, number] } | undefined {
  if (windows.length === 0 || windows.length !== bases.length || ![...windows, ...bases].every(enoughBlocks)) return undefined;
  const ratio = geometricMean(windows.map((w, i) => p99OfBlocks(w) / p99OfBlocks(bases[i]!)));
  return { ratio, interval: ratioInterval(windows, bases) };
}

/** Where the target falls against the (unrounded) interval. */
export function againstTarget(interval: [number, number] | undefined, target: number): 'below' | 'above' | 'inconclusive' | undefined {
  if (!interval) return undefined;
  if (interval[1] <= target) return 'below';
  if (interval[0] > target) return 'above';
  return 'inconclusive';
}
