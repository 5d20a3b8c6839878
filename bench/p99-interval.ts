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
 * Pooling several runs (`npm run bench:pool`) takes the interval over the runs' ratios
 * instead, so the drift of each run's pair of windows enters it.
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

/** The 90% interval of the p99 ratio `window / base` from the two windows' blocks. */
function ratioInterval(window: LatencyBlocks, base: LatencyBlocks): [number, number] {
  const next = random(0x5eed);
  const ratios = new Float64Array(ITERATIONS);
  for (let i = 0; i < ITERATIONS; i++) ratios[i] = resampledP99(window, next) / resampledP99(base, next);
  ratios.sort();
  const tail = (1 - LEVEL) / 2;
  const at = (q: number) => ratios[Math.min(ITERATIONS - 1, Math.floor(q * ITERATIONS))]!;
  return [at(tail), at(1 - tail)];
}

/**
 * Student's t, the 95% quantile (one side of a 90% interval) for 1–30 degrees of
 * freedom; beyond 30 the last, a little wider than the normal's 1.645.
 */
const T_95 = [6.314, 2.92, 2.353, 2.132, 2.015, 1.943, 1.895, 1.86, 1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753, 1.746, 1.74, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697];

/**
 * The geometric mean of runs' ratios and its 90% interval: each run's log ratio is one
 * replicate, its own sampling noise included, so the t interval of their mean covers
 * both that noise and how far the runs differ from each other (a busy hour, the drift
 * between a window and its baseline), and stays honest with a handful of runs, where a
 * bootstrap over so few is too narrow.
 */
function meanOfRuns(ratios: number[]): { ratio: number; interval: [number, number] } {
  const logs = ratios.map(Math.log);
  const n = logs.length;
  const mean = logs.reduce((a, b) => a + b, 0) / n;
  const sd = Math.sqrt(logs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
  const half = T_95[Math.min(n - 1, T_95.length) - 1]! * (sd / Math.sqrt(n));
  return { ratio: Math.exp(mean), interval: [Math.exp(mean - half), Math.exp(mean + half)] };
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
  return enoughBlocks(w) && enoughBlocks(b) ? ratioInterval(w, b) : undefined;
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
 * be the busiest run's), with its 90% interval over the runs (one run: its blocks').
 * `windows[i]` was held against `bases[i]`. Undefined when there is no run or a window
 * has too few blocks.
 */
export function pooledP99Ratio(windows: LatencyBlocks[], bases: LatencyBlocks[]): { ratio: number; interval: [number, number] } | undefined {
  if (windows.length === 0 || windows.length !== bases.length || ![...windows, ...bases].every(enoughBlocks)) return undefined;
  const ratios = windows.map((w, i) => p99OfBlocks(w) / p99OfBlocks(bases[i]!));
  return ratios.length === 1 ? { ratio: ratios[0]!, interval: ratioInterval(windows[0]!, bases[0]!) } : meanOfRuns(ratios);
}

/** Where the target falls against the (unrounded) interval. */
export function againstTarget(interval: [number, number] | undefined, target: number): 'below' | 'above' | 'inconclusive' | undefined {
  if (!interval) return undefined;
  if (interval[1] <= target) return 'below';
  if (interval[0] > target) return 'above';
  return 'inconclusive';
}
