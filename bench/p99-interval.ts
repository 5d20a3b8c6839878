/**
 * How sure a window's p99 ratio is. A 60-s failure window's p99 is its 24th slowest of
 * ~2,400 deliveries (a baseline's, with three receivers, its 36th of ~3,600), and a
 * moment when the machine stalls holds several of them at once, so the ratio of two
 * windows' p99s moves run to run by more than the 1.3× it is held to. A block
 * bootstrap says how far it could move from the windows' own sampling: each window is
 * cut into BLOCK_MS blocks of publish time (a stall stays inside its block), blocks are
 * drawn with replacement into as many as the window had, and the ratio of the two
 * resampled p99s is taken, ITERATIONS times. Two things it does not cover: latencies
 * that depend on each other for longer than a block (a queue left by a stall), which
 * make the interval too narrow; and the machine drifting between two windows minutes
 * apart, which the failure scenario's two no-failure windows show.
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

/** One resample: from each stratum (a run's window), as many blocks as it has, drawn with replacement. */
function resampledP99(strata: LatencyBlocks[], next: () => number): number {
  const drawn: number[][] = [];
  let n = 0;
  for (const blocks of strata) {
    for (let i = 0; i < blocks.length; i++) {
      const b = blocks[Math.floor(next() * blocks.length)]!;
      drawn.push(b);
      n += b.length;
    }
  }
  const values = new Float64Array(n);
  let at = 0;
  for (const b of drawn) for (const v of b) values[at++] = v;
  return p99(values);
}

/** The 90% interval of p99(windows) / p99(bases), each side resampled within each of its strata. */
function ratioInterval(windows: LatencyBlocks[], bases: LatencyBlocks[]): [number, number] {
  const next = random(0x5eed);
  const ratios = new Float64Array(ITERATIONS);
  for (let i = 0; i < ITERATIONS; i++) ratios[i] = resampledP99(windows, next) / resampledP99(bases, next);
  ratios.sort();
  const tail = (1 - LEVEL) / 2;
  const at = (q: number) => ratios[Math.min(ITERATIONS - 1, Math.floor(q * ITERATIONS))]!;
  return [at(tail), at(1 - tail)];
}

const enoughBlocks = (blocks: LatencyBlocks | undefined): blocks is LatencyBlocks => !!blocks && blocks.length >= MIN_BLOCKS;

/**
 * The 90% interval of the p99 ratio `window / base`, unrounded, or undefined when
 * either window's blocks were not kept or are too few to resample.
 */
export function p99RatioInterval(window: object, base: object): [number, number] | undefined {
  const w = blocksOf.get(window);
  const b = blocksOf.get(base);
  return enoughBlocks(w) && enoughBlocks(b) ? ratioInterval([w], [b]) : undefined;
}

/** The p99 of every latency in these windows' blocks together. */
export function pooledP99(strata: LatencyBlocks[]): number {
  return p99(Float64Array.from(strata.flat(2)));
}

/** The blocks kept for a window's percentiles (what bench/run.ts saves for pooling runs). */
export function blocksFor(percentiles: object): LatencyBlocks | undefined {
  return blocksOf.get(percentiles);
}

/**
 * Several runs' windows pooled (bench/pool.ts): the ratio of the p99 of all the failure
 * windows' latencies to the p99 of all their baselines', and its 90% interval, each run's
 * window resampled within itself (a stratified block bootstrap), so that a run in a busy
 * hour moves both sides of its ratio together. Runs are paired: `windows[i]` was held
 * against `bases[i]`. Undefined when a window has too few blocks.
 */
export function pooledP99Ratio(windows: LatencyBlocks[], bases: LatencyBlocks[]): { ratio: number; interval: [number, number] } | undefined {
  if (windows.length === 0 || windows.length !== bases.length || ![...windows, ...bases].every(enoughBlocks)) return undefined;
  return { ratio: pooledP99(windows) / pooledP99(bases), interval: ratioInterval(windows, bases) };
}

/** Where the target falls against the (unrounded) interval. */
export function againstTarget(interval: [number, number] | undefined, target: number): 'below' | 'above' | 'inconclusive' | undefined {
  if (!interval) return undefined;
  if (interval[1] <= target) return 'below';
  if (interval[0] > target) return 'above';
  return 'inconclusive';
}
