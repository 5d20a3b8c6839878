import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Vitest's order (failed and slow files first), except the fuzz tests, which run
 * last: they load the machine for minutes, and timing-sensitive files (worker
 * kills, Temporal restarts) should not share the cores with them.
 */
export default class FuzzLastSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const fuzz = (f: TestSpecification) => /[\\/]test[\\/]fuzz[\\/]/.test(f.moduleId);
    return [...sorted.filter((f) => !fuzz(f)), ...sorted.filter(fuzz)];
  }
}
