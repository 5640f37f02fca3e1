import { defineConfig } from 'vitest/config';

/**
 * Two projects, chosen by where a test lives (docs/ARCHITECTURE.md, "Tests"):
 * - `e2e`: real sockets and processes — everything under test/{e2e,kube,proxy,east-west,admin,tls,grpc,browser,hostile,fleet}/ and any
 *   `*.e2e.test.ts` anywhere. Put a new socket/process test in one of those folders or give it that suffix.
 * - `unit`: everything else; pure code, fake timers. test/support/unit-guard.ts fails any unit test that
 *   listens on or connects a socket or spawns a process, so a misfiled test is caught, not tolerated.
 *   A pure test in an e2e folder can say so with the `*.unit.test.ts` suffix.
 */
const E2E_DIRS = 'e2e|kube|proxy|east-west|admin|tls|grpc|browser|hostile|fleet';
const e2eFiles = [`test/+(${E2E_DIRS})/**/*.test.ts`, '{test,src}/**/*.e2e.test.ts'];
const unitFiles = [
  `test/!(${E2E_DIRS})/**/*.test.ts`,
  'test/*.test.ts',
  'src/**/*.test.ts',
  '{test,src}/**/*.unit.test.ts',
];

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
          exclude: ['**/*.unit.test.ts', '**/node_modules/**'],
          testTimeout: 20_000,
          hookTimeout: 30_000,
        },
      },
    ],
  },
});
