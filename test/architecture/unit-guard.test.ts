import { execFileSync, fork, spawn } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { REAL_WAIT_MIN_MS, takeRealTimeWaits } from '../support/real-time-guard.ts';

// The unit project's setup file (test/support/unit-guard.ts) is what keeps socket and process tests out of it.
describe('a unit test cannot reach the network or start processes', () => {
  it.each([
    ['listen on a TCP socket', () => createServer().listen(0, '127.0.0.1')],
    ['listen with an HTTP server', () => createHttpServer().listen(0, '127.0.0.1')],
    ['connect a TCP socket', () => connect(9, '127.0.0.1')],
    ['spawn a process', () => spawn(process.execPath, ['-e', ''])],
    ['fork a process', () => fork('-e')],
    ['run a process synchronously', () => execFileSync(process.execPath, ['-e', ''])],
  ])('%s', (_what, attempt) => {
    expect(attempt).toThrow(/^unit tests do not /);
  });

  it('fetch fails before any connection is made', async () => {
    await expect(fetch('http://127.0.0.1:1080/')).rejects.toSatisfy((error: Error) =>
      /unit tests do not connect/.test(String((error.cause as Error | undefined)?.message)),
    );
  });
});

describe('a unit test cannot wait on the wall clock', () => {
  it('records a real timer that fires, so the test that waited fails', async () => {
    await new Promise((resolve) => setTimeout(resolve, REAL_WAIT_MIN_MS));
    // Taken here so that this test passes; left, unit-guard.ts's afterEach would fail it.
    expect(takeRealTimeWaits()).toEqual([
      expect.stringMatching(
        new RegExp(`^a real setTimeout of ${REAL_WAIT_MIN_MS} ms fired \\(armed at .*unit-guard\\.test\\.ts`),
      ),
    ]);
  });

  it('ignores real timers that are cleared, short ones, and fake timers', async () => {
    clearTimeout(setTimeout(() => {}, 60_000));
    await new Promise((resolve) => setTimeout(resolve, 0));
    vi.useFakeTimers();
    try {
      const fired = vi.fn();
      setTimeout(fired, 1000);
      vi.advanceTimersByTime(1000);
      expect(fired).toHaveBeenCalledOnce();
    } finally {
      vi.useRealTimers();
    }
    expect(takeRealTimeWaits()).toEqual([]);
  });
});
