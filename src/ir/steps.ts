import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Work as a sequence of steps: a generator that yields between units of work (a route, a backend) and returns
 * the result. Translating and compiling stay pure and synchronous; whoever runs them decides whether to stop
 * between steps: the reconciler and the proxy let the serving loop run every few milliseconds, so that a table
 * of 10,000 routes does not stall requests for its whole length.
 */
export type Steps<T> = Generator<void, T, void>;

/** Runs every step at once. */
export function runAllSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Where a sliced run reads the time and how it lets the event loop run (a fake in tests). */
export interface SliceClock {
  now(): number;
  pause(): Promise<void>;
}

export const eventLoopClock: SliceClock = { now: () => performance.now(), pause: () => nextTurn() };

/**
 * Runs `steps` in slices of about `sliceMs`, letting the event loop run between them (timers, sockets: the
 * requests a long translation would otherwise hold up). `sliceMs` 0 runs every step at once.
 */
export async function runInSlices<T>(
  steps: Steps<T>,
  sliceMs: number,
  clock: SliceClock = eventLoopClock,
): Promise<T> {
  if (sliceMs <= 0) return runAllSteps(steps);
  let sliceEnd = clock.now() + sliceMs;
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (clock.now() >= sliceEnd) {
      await clock.pause();
      sliceEnd = clock.now() + sliceMs;
    }
  }
}
