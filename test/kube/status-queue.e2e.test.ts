import { describe, expect, it } from 'vitest';
import { type QueueOutcome, StatusQueue, type StatusQueueTimers } from '../../src/kube/status-queue.ts';

/** A fake clock: timers fire only when the test advances time. */
function fakeTimers(): StatusQueueTimers & { advance(ms: number): Promise<void> } {
  let now = 0;
  let timers: { at: number; callback: () => void; id: number }[] = [];
  let nextId = 1;
  return {
    now: () => now,
    setTimeout(callback, ms) {
      const id = nextId++;
      timers.push({ at: now + ms, callback, id });
      return id;
    },
    clearTimeout(handle) {
      timers = timers.filter((t) => t.id !== handle);
    },
    async advance(ms) {
      const until = now + ms;
      for (;;) {
        timers.sort((x, y) => x.at - y.at);
        const next = timers[0];
        if (next === undefined || next.at > until) break;
        timers.shift();
        now = next.at;
        next.callback();
        await flush();
      }
      now = until;
      await flush();
    },
  };
}

const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('StatusQueue', () => {
  it('coalesces items per key: a newer item replaces a queued one, a key is never processed twice at once', async () => {
    const seen: string[] = [];
    let releaseFirst: () => void = () => {};
    const queue = new StatusQueue<string>({
      concurrency: 1,
      timers: fakeTimers(),
      process: (item) => {
        seen.push(item);
        if (item === 'a1') return new Promise<QueueOutcome>((r) => (releaseFirst = () => r('done')));
        return Promise.resolve('done');
      },
    });
    queue.add('a', 'a1');
    queue.add('a', 'a2');
    queue.add('a', 'a3');
    queue.add('b', 'b1');
    await flush();
    expect(seen).toEqual(['a1']);
    releaseFirst();
    await queue.idle();
    // a2 was replaced before it started; a3 waited for a1 to finish.
    expect(seen).toEqual(['a1', 'a3', 'b1']);
  });

  it('retries a failing key with a doubling backoff, and a newer item skips the wait', async () => {
    const timers = fakeTimers();
    const attempts: { item: string; at: number }[] = [];
    const queue = new StatusQueue<string>({
      timers,
      retryMs: 100,
      retryMaxMs: 350,
      process: async (item) => {
        attempts.push({ item, at: timers.now() });
        return item === 'bad' ? 'retry' : 'done';
      },
    });
    queue.add('k', 'bad');
    await flush();
    await timers.advance(1000);
    expect(attempts.map((a) => a.at)).toEqual([0, 100, 300, 650, 1000]);
    queue.add('k', 'good');
    await flush();
    expect(attempts.at(-1)).toEqual({ item: 'good', at: 1000 });
    await timers.advance(5000);
    expect(attempts).toHaveLength(6);
  });

  it('rate-limits starts with a token bucket (burst, then qps)', async () => {
    const timers = fakeTimers();
    const starts: number[] = [];
    const queue = new StatusQueue<number>({
      timers,
      qps: 10,
      burst: 3,
      concurrency: 100,
      process: async () => {
        starts.push(timers.now());
        return 'done';
      },
    });
    for (let i = 0; i < 6; i++) queue.add(String(i), i);
    await flush();
    expect(starts).toEqual([0, 0, 0]);
    await timers.advance(1000);
    expect(starts).toEqual([0, 0, 0, 100, 200, 300]);
  });
});
