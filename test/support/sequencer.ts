import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files measured longest (each waits out a fault or starts services of its own). Vitest runs
 * the slowest files first once it has timed them; on a fresh clone it has no timings and runs
 * the largest files first, which can leave one of these to run alone at the end.
 */
const LONGEST = [
  'test/fault/temporal-restarted.test.ts', 'test/launcher/dev.test.ts', 'test/engine/durability.test.ts', 'test/engine/worker-processes.test.ts',
  'test/fault/receiver-down.test.ts', 'test/fault/postgres-restarted.test.ts', 'test/fault/worker-killed.test.ts', 'test/fault/api-killed.test.ts',
];

/**
 * Vitest's order (failed and slow files first), with LONGEST first while vitest has no timings
 * of them, and the fuzz tests last: they load the machine for minutes, and timing-sensitive
 * files (worker kills, Temporal restarts) should not share the cores with them.
 */
export default class FuzzLastSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const relative = (f: TestSpecification) => path.relative(this.ctx.config.root, f.moduleId).split(path.sep).join('/');
    const untimed = (f: TestSpecification) => this.ctx.cache.getFileTestResults(`${f.project.name}:${relative(f)}`) === undefined;
    const rank = (f: TestSpecification) => (untimed(f) && LONGEST.includes(relative(f)) ? LONGEST.indexOf(relative(f)) : LONGEST.length);
    const fuzz = (f: TestSpecification) => /[\\/]test[\\/]fuzz[\\/]/.test(f.moduleId);
    const ordered = sorted.filter((f) => !fuzz(f)).map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map(({ f }) => f);
    return [...ordered, ...sorted.filter(fuzz)];
  }
}
