import { describe, expect, it } from 'vitest';
import { flushAtEndOfPoll, type HeldWrite } from '../../src/net/end-of-poll.ts';

/** Resolves in the immediate after the ones already queued (setImmediate runs its queue in order). */
function nextImmediate(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function holder(name: string, log: string[], then?: () => void): HeldWrite {
  return {
    flushHeld() {
      log.push(name);
      then?.();
    },
  };
}

describe('flushAtEndOfPoll', () => {
  it('holds writes until the current callback and its microtasks are over, then flushes them in order', async () => {
    const log: string[] = [];
    flushAtEndOfPoll(holder('a', log));
    flushAtEndOfPoll(holder('b', log));
    await Promise.resolve();
    expect(log).toEqual([]);
    await nextImmediate();
    expect(log).toEqual(['a', 'b']);
  });

  it('flushes a holder queued while flushing (a pipelined answer) on the next turn, after the others', async () => {
    const log: string[] = [];
    flushAtEndOfPoll(holder('first', log, () => flushAtEndOfPoll(holder('queued-during', log))));
    flushAtEndOfPoll(holder('second', log));
    await nextImmediate();
    expect(log).toEqual(['first', 'second']);
    await nextImmediate();
    expect(log).toEqual(['first', 'second', 'queued-during']);
  });
});
