import { readFileSync, writeFileSync } from 'node:fs';
import { blocksFor, type LatencyBlocks } from './p99-interval';
import { field, STEADY_WINDOWS, type WindowName } from './targets';

/**
 * Each steady-load window's latencies by block of publish time, saved beside a run's
 * JSON as `<date>.latency-blocks.json` so that several runs can be pooled
 * (`npm run bench:pool`): one 60-s window's p99 cannot settle a 1.3× target.
 */
export type WindowBlocks = Partial<Record<WindowName, LatencyBlocks>>;

/** The blocks of every window the run measured (none for a scenario that did not run or received nothing). */
export function windowBlocks(results: Record<string, unknown>): WindowBlocks {
  const out: WindowBlocks = {};
  for (const [name, path] of Object.entries(STEADY_WINDOWS) as [WindowName, readonly string[]][]) {
    const percentiles = field(results, ...path, 'latency_ms');
    const blocks = percentiles && typeof percentiles === 'object' ? blocksFor(percentiles) : undefined;
    if (blocks && blocks.length > 0) out[name] = blocks;
  }
  return out;
}

const SUFFIX = '.latency-blocks.json';
export const blocksFileOf = (resultsFile: string) => resultsFile.replace(/\.json$/, SUFFIX);
/** A latency-blocks file rather than a run's results. */
export const isBlocksFile = (file: string) => file.endsWith(SUFFIX);

export function saveWindowBlocks(resultsFile: string, blocks: WindowBlocks): void {
  if (Object.keys(blocks).length > 0) writeFileSync(blocksFileOf(resultsFile), JSON.stringify(blocks) + '\n');
}

/** Throws ENOENT when the run saved none (runs before 2026-11-25, or no steady window). */
export function loadWindowBlocks(resultsFile: string): WindowBlocks {
  return JSON.parse(readFileSync(blocksFileOf(resultsFile), 'utf8')) as WindowBlocks;
}
