import { readFileSync, writeFileSync } from 'node:fs';
import { blocksFor, type LatencyBlocks } from './p99-interval';

/**
 * Each steady-load window's latencies by block of publish time, saved beside a run's
 * JSON as `<date>.latency-blocks.json` so that several runs can be pooled
 * (`npm run bench:pool`): one 60-s window's p99 cannot settle a 1.3× target.
 * Windows are named by where their `latency_ms` sits in the results.
 */
const WINDOWS = {
  latency: ['latency'],
  failure: ['failure'],
  'failure.while_earlier_retries_due': ['failure', 'while_earlier_retries_due'],
  'failure.no_failure_after': ['failure', 'no_failure_after'],
} as const;
export type WindowName = keyof typeof WINDOWS;
export type WindowBlocks = Partial<Record<WindowName, LatencyBlocks>>;

const percentilesAt = (results: Record<string, unknown>, keys: readonly string[]): object | undefined => {
  let v: unknown = results;
  for (const k of [...keys, 'latency_ms']) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v && typeof v === 'object' ? v : undefined;
};

/** The blocks of every window the run measured (none for scenarios that did not run). */
export function windowBlocks(results: Record<string, unknown>): WindowBlocks {
  const out: WindowBlocks = {};
  for (const [name, keys] of Object.entries(WINDOWS) as [WindowName, readonly string[]][]) {
    const p = percentilesAt(results, keys);
    const blocks = p && blocksFor(p);
    if (blocks) out[name] = blocks;
  }
  return out;
}

export const blocksFileOf = (resultsFile: string) => resultsFile.replace(/\.json$/, '.latency-blocks.json');

export function saveWindowBlocks(resultsFile: string, blocks: WindowBlocks): void {
  if (Object.keys(blocks).length > 0) writeFileSync(blocksFileOf(resultsFile), JSON.stringify(blocks) + '\n');
}

export function loadWindowBlocks(resultsFile: string): WindowBlocks {
  return JSON.parse(readFileSync(blocksFileOf(resultsFile), 'utf8')) as WindowBlocks;
}
