import { defineConfig } from 'vitest/config';

/**
 * Two projects, chosen by file name (docs/ARCHITECTURE.md, "Tests"), so `test/` can mirror `src/`:
 * - `e2e`: real sockets and processes, every `*.e2e.test.ts`.
 * - `unit`: every other `*.test.ts`; pure code, fake timers. test/support/unit-guard.ts fails any unit test that
 *   listens on or connects a socket or spawns a process, so a misnamed test is caught, not tolerated.
 */
const e2eFiles = ['{test,src}/**/*.e2e.test.ts'];
const unitFiles = ['{test,src}/**/*.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: unitFiles,
          exclude: ['**/*.e2e.test.ts', '**/node_modules/**'],
          setupFiles: ['./test/support/unit-guard.ts'],
          pool: 'threads',
          isolate: false,
          testTimeout: 5_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: e2eFiles,
          globalSetup: ['./test/support/gateway-build.ts'],
          exclude: ['**/node_modules/**'],
          testTimeout: 20_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
