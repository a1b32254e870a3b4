// Prints one closing line, `tests: N passed, N failed, N skipped`, that any CI log reader understands. The
// line must agree with the exit code: besides failed tests, a file that failed to load and a failed hook
// (a beforeAll that throws leaves its tests skipped, an afterAll that throws leaves them passed) each count
// as one failure, and so does a run that failed for a reason outside any file.
import type { Reporter, TestModule, TestRunEndReason, TestSuite } from 'vitest/node';

/** Failures in `entity`: its failed tests, and itself when it failed with none of those below it. */
function countFailures(entity: TestModule | TestSuite): number {
  let failures = 0;
  for (const child of entity.children) {
    if (child.type === 'suite') failures += countFailures(child);
    else if (child.result().state === 'failed') failures += 1;
  }
  if (failures === 0 && entity.state() === 'failed') failures = 1;
  return failures;
}

export default class SummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<unknown>,
    reason?: TestRunEndReason,
  ): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const module of testModules) {
      failed += countFailures(module);
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state !== 'failed') skipped += 1;
      }
    }
    if (reason === 'failed' && failed === 0) failed = 1;
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
