import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keepBlocks, type LatencyBlocks } from '../../bench/p99-interval';
import { type PoolRun, poolRuns } from '../../bench/pooled-ratio';
import { blocksFileOf, loadWindowBlocks, saveWindowBlocks, type WindowBlocks, windowBlocks } from '../../bench/window-blocks';

/** 30 blocks of 40 latencies, 10–29 ms times `scale`. */
const window = (scale: number, blocks = 30): LatencyBlocks => Array.from({ length: blocks }, () => Array.from({ length: 40 }, (_, i) => scale * (10 + (i % 20))));
/** What a run's JSON says of its windows: everything received, nothing refused. */
const clean = { not_received_within_wait: 0, publish_errors: 0 };
const results = (over: Record<string, unknown> = {}) => ({ latency: clean, failure: { ...clean, while_earlier_retries_due: clean, no_failure_after: clean }, ...over });
const run = (file: string, blocks: WindowBlocks, res = results()): PoolRun => ({ file, blocks, results: res });

describe('poolRuns (npm run bench:pool)', () => {
  it('holds each failure window against the baseline targets uses, and says met when both pooled intervals lie at or below 1.3', () => {
    // The latency scenario is twice as slow as the window a minute after the second one:
    // held against it, the second window would come out at 0.55, not 1.1.
    const a = run('a.json', { latency: window(2), failure: window(2.4), 'failure.while_earlier_retries_due': window(1.1), 'failure.no_failure_after': window(1) });
    const b = run('b.json', { latency: window(2), failure: window(2.4), 'failure.while_earlier_retries_due': window(1.1), 'failure.no_failure_after': window(1) });
    const { pooled, target } = poolRuns([a, b]);
    expect(pooled.first_window).toMatchObject({ runs: 2, p99_ratio: 1.2, p99_ratio_90pct_interval: [1.2, 1.2], p99_ratio_vs_1_3: 'below' });
    expect(pooled.while_earlier_retries_due).toMatchObject({ runs: 2, p99_ratio: 1.1, p99_ratio_vs_1_3: 'below' });
    expect(pooled.while_earlier_retries_due.per_run).toEqual([
      { file: 'a.json', baseline: 'failure.no_failure_after', window_p99_ms: 31.9, baseline_p99_ms: 29, p99_ratio: 1.1 },
      { file: 'b.json', baseline: 'failure.no_failure_after', window_p99_ms: 31.9, baseline_p99_ms: 29, p99_ratio: 1.1 },
    ]);
    expect(target).toMatchObject({ now: { first_window: 1.2, while_earlier_retries_due: 1.1 }, verdict: 'met' });
  });

  it('says not met when one pooled window lies above 1.3, and falls back to the latency scenario when no window came after', () => {
    const c = run('c.json', { latency: window(1), failure: window(1.1), 'failure.while_earlier_retries_due': window(1.5) });
    const { pooled, target } = poolRuns([c]);
    expect(pooled.while_earlier_retries_due).toMatchObject({ p99_ratio: 1.5, p99_ratio_vs_1_3: 'above' });
    expect(pooled.while_earlier_retries_due.per_run[0]!.baseline).toBe('latency');
    expect(target.verdict).toBe('not met');
  });

  it('says inconclusive when an interval spans 1.3', () => {
    // Runs of 1.0 and 1.6: the interval spans both.
    const runs = [1, 1.6].map((r, i) => run(`${i}.json`, { latency: window(1), failure: window(r) }));
    expect(poolRuns(runs).target.verdict).toBe('inconclusive: pool more runs');
  });

  it('judges the first window alone, and says so, when no run measured the second', () => {
    const { pooled, target } = poolRuns([run('q.json', { latency: window(1), failure: window(1.1) })]);
    expect(pooled.while_earlier_retries_due).toMatchObject({ runs: 0 });
    expect(target).toMatchObject({ now: { first_window: 1.1, while_earlier_retries_due: null }, verdict: 'met' });
    expect(target.note).toMatch(/first window only/);
    expect(poolRuns([]).target.verdict).toBeNull();
  });

  it('leaves out a window that lost deliveries or is too short, and its run with it', () => {
    const good = run('good.json', { latency: window(1), failure: window(1.1) });
    // Its slowest deliveries were never received: its p99 would come out too low.
    const lost = run('lost.json', { latency: window(1), failure: window(0.5) }, results({ failure: { ...clean, not_received_within_wait: 3 } }));
    const short = run('short.json', { latency: window(1), failure: window(0.5, 10) });
    const { pooled } = poolRuns([good, lost, short]);
    expect(pooled.first_window).toMatchObject({ runs: 1, p99_ratio: 1.1 });
    expect(pooled.first_window.left_out).toEqual([
      { file: 'lost.json', why: 'failure: deliveries not received within the wait' },
      { file: 'short.json', why: 'failure: 10 blocks, too few to resample' },
    ]);
  });
});

describe('window blocks, saved beside a run', () => {
  it('finds every steady window through the results as bench/run.ts builds them, and reads back what it saved', () => {
    // As bench/run.ts: each scenario's stats spread into the result it reports.
    const stats = (scale: number) => {
      const latency_ms = { p99: 29 * scale };
      keepBlocks(latency_ms, window(scale));
      return { latency_ms };
    };
    const second = stats(1.2);
    const after = stats(1);
    const f = { ...stats(1.1), while_earlier_retries_due: second, no_failure_after: after };
    const res = { latency: stats(1), failure: { ...f, while_earlier_retries_due: { ...second, vs: {} }, no_failure_after: { ...after } }, api: { latency_ms: { p99: 3 } } };
    const blocks = windowBlocks(res);
    expect(Object.keys(blocks).sort()).toEqual(['failure', 'failure.no_failure_after', 'failure.while_earlier_retries_due', 'latency']);
    expect(blocks['failure.while_earlier_retries_due']).toEqual(window(1.2));

    const dir = mkdtempSync(path.join(tmpdir(), 'window-blocks-'));
    try {
      const file = path.join(dir, 'run.json');
      saveWindowBlocks(file, blocks);
      expect(blocksFileOf(file)).toBe(path.join(dir, 'run.latency-blocks.json'));
      expect(loadWindowBlocks(file)).toEqual(blocks);
      // A run without steady windows saves nothing.
      saveWindowBlocks(path.join(dir, 'none.json'), windowBlocks({ burst: {} }));
      expect(() => loadWindowBlocks(path.join(dir, 'none.json'))).toThrow(/ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('npm run bench:pool', () => {
  const POOL = path.resolve(import.meta.dirname, '../../bench/pool.ts');
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-pool-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A run's results file, and the latency-blocks file beside it unless `blocks` is undefined. */
  const runFile = (name: string, blocks: WindowBlocks | undefined, over: Record<string, unknown> = {}) => {
    const file = path.join(dir, `${name}.json`);
    const doc = { date: `2026-11-25T00:00:00.000Z-${name}`, mode: 'full', machine: { cpus: 2 }, services: { temporal: 'dev server' }, sizes: { latencyRate: 20, latencySeconds: 60 }, engine_env: { SHIPHOOK_ATTEMPT_TIMEOUT: '5s' }, failing_endpoint: '500', ...results(), ...over };
    writeFileSync(file, JSON.stringify(doc));
    if (blocks) writeFileSync(blocksFileOf(file), JSON.stringify(blocks));
    return file;
  };
  const pool = (...files: string[]) => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', POOL, ...files], { encoding: 'utf8' });
    return { status: r.status, stderr: r.stderr, doc: r.status === 0 ? JSON.parse(r.stdout) : undefined };
  };
  const pair = { latency: window(1), failure: window(1.2) };

  it('pools the runs given once each, skipping what it cannot pool with a line saying why', () => {
    const a = runFile('a', pair);
    const b = runFile('b', pair);
    const before = runFile('before-blocks-were-saved', undefined);
    const broken = runFile('broken', pair, { targets: { correctness: { met: false } } });
    const garbled = path.join(dir, 'garbled.json');
    writeFileSync(garbled, '{"date": ');
    const again = path.join(dir, '.', 'a.json').replace(dir, path.relative(process.cwd(), dir));
    const { status, stderr, doc } = pool(a, blocksFileOf(a), b, before, broken, garbled, again, path.join(dir, 'notes.txt'));
    expect(status).toBe(0);
    expect(doc.runs.map((r: { file: string }) => r.file)).toEqual(['a.json', 'b.json']);
    expect(doc.pooled.first_window).toMatchObject({ runs: 2, p99_ratio: 1.2 });
    expect(stderr).toContain('before-blocks-were-saved.json: no latency-blocks file beside it, skipped');
    expect(stderr).toContain('broken.json: its correctness check failed, skipped');
    expect(stderr).toMatch(/garbled\.json: unreadable \(.*JSON.*\), skipped/);
    expect(stderr).toContain('a.json: the run of 2026-11-25T00:00:00.000Z-a again, skipped');
    expect(stderr).toContain('notes.txt: not a results file (.json), skipped');
    // The blocks file given with its run is its companion, not a run.
    expect(stderr).not.toContain('latency-blocks.json');
  });

  it('refuses runs of different loads, and exits 2 when there is no run to pool', () => {
    const slow = runFile('slow', pair, { sizes: { latencyRate: 10, latencySeconds: 60 } });
    const fast = runFile('fast', pair);
    const mixed = pool(slow, fast);
    expect(mixed.status).toBe(2);
    expect(mixed.stderr).toContain('runs of different loads do not pool');
    const none = pool(runFile('old', undefined));
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('no run to pool');
  });
});
