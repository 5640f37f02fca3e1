import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with the plain `N passed, N failed, N skipped` line that CI reads, after the slowest files: the suite has a
 * time budget in CI, and this is where it goes.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: readonly TestModule[]): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      if (module.state() === 'failed' && module.children.size === 0) failed++;
    }
    const slowest = [...testModules]
      .map((module) => ({ file: module.relativeModuleId, seconds: module.diagnostic().duration / 1000 }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, 8);
    if (slowest.length > 1) {
      process.stdout.write('\nSlowest files (tests and hooks):\n');
      for (const { file, seconds } of slowest)
        process.stdout.write(`  ${seconds.toFixed(1).padStart(6)} s  ${file}\n`);
    }
    process.stdout.write(`\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
