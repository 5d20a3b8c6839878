import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LatencyBlocks } from '../../bench/p99-interval';
import { blocksFileOf, type WindowBlocks } from '../../bench/window-blocks';

const POOL = path.resolve(import.meta.dirname, '../../bench/pool.ts');
const dir = mkdtempSync(path.join(tmpdir(), 'bench-pool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** 30 blocks of 40 latencies, 10–29 ms times `scale`. */
const window = (scale: number): LatencyBlocks => Array.from({ length: 30 }, () => Array.from({ length: 40 }, (_, i) => scale * (10 + (i % 20))));

/** A run's results file and the latency-blocks file beside it. */
function run(name: string, blocks: WindowBlocks | undefined, rate = 20): string {
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ date: name, sizes: { latencyRate: rate, latencySeconds: 60 }, engine_env: { SHIPHOOK_ATTEMPT_TIMEOUT: '5s' }, failing_endpoint: '500' }));
  if (blocks) writeFileSync(blocksFileOf(file), JSON.stringify(blocks));
  return file;
}

const pool = (...files: string[]) => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', POOL, ...files], { encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr, doc: r.status === 0 ? JSON.parse(r.stdout) : undefined };
};

describe('npm run bench:pool', () => {
  it('pools each window with its own baseline over the runs, and says whether 1.3 is met', () => {
    // Run a: the first window 1.2× its baseline; the second 1.1× the window after it
    // (the latency scenario, 2× slower, is not that window's baseline).
    const a = run('a', { latency: window(1), failure: window(1.2), 'failure.while_earlier_retries_due': window(1.1), 'failure.no_failure_after': window(1) });
    // Run b, in a busier hour: everything twice as slow, the same ratios.
    const b = run('b', { latency: window(2), failure: window(2.4), 'failure.while_earlier_retries_due': window(2.2), 'failure.no_failure_after': window(2) });
    const before = run('before-blocks-were-saved', undefined);
    const { status, stderr, doc } = pool(a, b, before, blocksFileOf(a));
    expect(status).toBe(0);
    expect(stderr).toContain('before-blocks-were-saved.json: no latency-blocks file beside it, skipped');
    expect(doc.runs.map((r: { file: string }) => r.file)).toEqual(['a.json', 'b.json']);
    expect(doc.pooled.first_window).toMatchObject({ runs: 2, deliveries: { window: 2_400, baseline: 2_400 }, p99_ratio: 1.2, p99_ratio_vs_1_3: 'below', per_run_p99_ratios: [1.2, 1.2] });
    expect(doc.pooled.while_earlier_retries_due).toMatchObject({ runs: 2, p99_ratio: 1.1, per_run_p99_ratios: [1.1, 1.1] });
    expect(doc.target.verdict).toBe('met');
  });

  it('says not met when a pooled window lies above 1.3, and holds the second window against the latency scenario when no window came after it', () => {
    const c = run('c', { latency: window(1), failure: window(1.1), 'failure.while_earlier_retries_due': window(1.5) });
    const { doc } = pool(c);
    expect(doc.pooled.while_earlier_retries_due).toMatchObject({ p99_ratio: 1.5, p99_ratio_vs_1_3: 'above' });
    expect(doc.target.verdict).toBe('not met');
  });

  it('refuses runs of different loads', () => {
    const slow = run('slow', { latency: window(1), failure: window(1) }, 10);
    const fast = run('fast', { latency: window(1), failure: window(1) }, 20);
    const { status, stderr } = pool(slow, fast);
    expect(status).toBe(2);
    expect(stderr).toContain('runs of different loads do not pool');
  });
});
