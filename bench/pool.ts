import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type PoolRun, poolRuns } from './pooled-ratio';
import { isBlocksFile, loadWindowBlocks } from './window-blocks';

/**
 * `npm run bench:pool -- bench/results/<date>.json …`
 * The failure target (issue #14) over several runs of the latency and failure scenarios
 * (bench/pooled-ratio.ts). One run's 60-s windows cannot settle 1.3: their interval is
 * ±0.2–0.5 wide. Only runs of the same load, mode, machine and services pool; runs
 * without a latency-blocks file beside them (before 2026-11-25) or whose correctness
 * check failed are skipped, each with a line on stderr. Prints one JSON document.
 */
const { positionals } = parseArgs({ allowPositionals: true });
const skip = (file: string, why: string) => process.stderr.write(`[pool] ${path.basename(file)}: ${why}, skipped\n`);

const runs: (PoolRun & { load: string; date: string })[] = [];
const seen = new Set<string>();
for (const file of positionals) {
  if (isBlocksFile(file)) continue; // the companion of a results file
  if (!file.endsWith('.json')) {
    skip(file, 'not a results file (.json)');
    continue;
  }
  let results: Record<string, unknown>;
  try {
    results = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    skip(file, `unreadable (${(e as Error).message})`);
    continue;
  }
  const date = String(results.date);
  if (seen.has(date)) {
    skip(file, `the run of ${date} again`);
    continue;
  }
  seen.add(date);
  if ((results.targets as { correctness?: { met?: boolean } } | undefined)?.correctness?.met === false) {
    skip(file, 'its correctness check failed');
    continue;
  }
  let blocks: PoolRun['blocks'];
  try {
    blocks = loadWindowBlocks(file);
  } catch (e) {
    skip(file, (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no latency-blocks file beside it' : `its latency-blocks file is unreadable (${(e as Error).message})`);
    continue;
  }
  const { sizes, machine, services, mode, engine_env: env, failing_endpoint: failing } = results as Record<string, Record<string, unknown> | undefined>;
  const load = `${sizes?.latencyRate} events/s × ${sizes?.latencySeconds} s, ${mode} mode, failing endpoint ${failing ?? '?'}, attempt timeout ${env?.SHIPHOOK_ATTEMPT_TIMEOUT}, ${machine?.cpus} cpus, ${JSON.stringify(services)}`;
  runs.push({ file: path.basename(file), date, load, results, blocks });
}
const loads = new Set(runs.map((r) => r.load));
if (loads.size > 1) {
  process.stderr.write(`[pool] runs of different loads do not pool:\n${[...loads].map((l) => `  ${l}`).join('\n')}\n`);
  process.exit(2);
}
if (runs.length === 0) {
  process.stderr.write('usage: npm run bench:pool -- bench/results/<date>.json … (runs of the latency and failure scenarios); no run to pool\n');
  process.exit(2);
}
const doc = { runs: runs.map(({ file, date }) => ({ file, date })), load: runs[0]!.load, ...poolRuns(runs) };
process.stdout.write(JSON.stringify(doc, null, 2) + '\n');
