import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints the plain closing line CI reads: "Tests: N passed, N failed, N skipped". A test
 * that did not run because its file failed around it (a `beforeAll` that threw) counts as
 * failed, not skipped: nothing it asserts was shown to hold.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const count = { passed: 0, failed: 0, skipped: 0 };
    for (const mod of testModules) {
      const fileFailed = mod.state() === 'failed';
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') count.passed++;
        else if (state === 'failed' || fileFailed) count.failed++;
        else count.skipped++;
      }
    }
    process.stdout.write(`\nTests: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped\n`);
  }
}
