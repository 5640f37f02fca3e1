import { afterEach, describe, expect, it, vi } from 'vitest';
import { Deadline, DeadlineClock, TimerWheel } from '../../src/net/timer-wheel.ts';

function recorder() {
  const fired: string[] = [];
  const deadline = (name: string, onExpire: () => void = () => {}) =>
    new Deadline(name, (target) => {
      fired.push(target);
      onExpire();
    });
  return { fired, deadline };
}

describe('TimerWheel', () => {
  it('fires a deadline at the first tick at or after it is due, never before', () => {
    const wheel = new TimerWheel(10, 8, 1_000);
    const { fired, deadline } = recorder();
    // Armed 7 ms into a tick: due at 1,032, so the tick of 1,030 is too early and that of 1,040 fires it.
    wheel.arm(deadline('a'), 1_007, 25);
    wheel.advance(1_031);
    expect(fired).toEqual([]);
    wheel.advance(1_040);
    expect(fired).toEqual(['a']);
    expect(wheel.size).toBe(0);
  });

  it('keeps a deadline several laps away until its own round comes', () => {
    const wheel = new TimerWheel(10, 4, 0);
    const { fired, deadline } = recorder();
    wheel.arm(deadline('far'), 0, 95);
    wheel.arm(deadline('near'), 0, 15);
    wheel.advance(20);
    expect(fired).toEqual(['near']);
    wheel.advance(90);
    expect(fired).toEqual(['near']);
    wheel.advance(100);
    expect(fired).toEqual(['near', 'far']);
  });

  it('cancels in O(1) without disturbing the other deadlines of the slot', () => {
    const wheel = new TimerWheel(10, 8, 0);
    const { fired, deadline } = recorder();
    const [a, b, c] = [deadline('a'), deadline('b'), deadline('c')];
    for (const d of [a, b, c]) wheel.arm(d, 0, 30);
    wheel.cancel(a);
    wheel.cancel(a);
    expect(a.armed).toBe(false);
    expect(wheel.size).toBe(2);
    wheel.advance(30);
    expect(fired.sort()).toEqual(['b', 'c']);
  });

  it('re-arming moves a deadline instead of adding a second one', () => {
    const wheel = new TimerWheel(10, 8, 0);
    const { fired, deadline } = recorder();
    const a = deadline('a');
    wheel.arm(a, 0, 20);
    wheel.arm(a, 0, 50);
    expect(wheel.size).toBe(1);
    wheel.advance(40);
    expect(fired).toEqual([]);
    wheel.advance(50);
    expect(fired).toEqual(['a']);
  });

  it('a deadline fired may cancel another one due in the same tick, or re-arm itself', () => {
    const wheel = new TimerWheel(10, 8, 0);
    const { fired, deadline } = recorder();
    let again = true;
    const victim = deadline('victim');
    const killer = deadline('killer', () => wheel.cancel(victim));
    const phoenix: Deadline<string> = deadline('phoenix', () => {
      if (again) wheel.arm(phoenix, 30, 10);
      again = false;
    });
    wheel.arm(killer, 0, 30);
    wheel.arm(victim, 0, 30);
    wheel.arm(phoenix, 0, 30);
    wheel.advance(30);
    expect(fired).toContain('killer');
    expect(fired).not.toContain('victim');
    expect(fired.filter((name) => name === 'phoenix')).toHaveLength(1);
    wheel.advance(40);
    expect(fired.filter((name) => name === 'phoenix')).toHaveLength(2);
    expect(wheel.size).toBe(0);
  });

  it('after a stall longer than the wheel, fires everything due once, in one advance', () => {
    const wheel = new TimerWheel(10, 4, 0);
    const { fired, deadline } = recorder();
    for (const [name, delay] of [
      ['a', 10],
      ['b', 25],
      ['c', 200],
      ['d', 10_000],
    ] as const)
      wheel.arm(deadline(name), 0, delay);
    wheel.advance(5_000);
    expect(fired.sort()).toEqual(['a', 'b', 'c']);
    expect(wheel.coarseNowMs).toBe(5_000);
    wheel.advance(10_000);
    expect(fired).toContain('d');
  });

  it('loses nothing after a stall: many deadlines in few slots all fire in one advance', () => {
    const wheel = new TimerWheel(10, 8, 0);
    const fired: number[] = [];
    for (let i = 0; i < 20; i++) wheel.arm(new Deadline(i, (n) => fired.push(n)), 0, 10 + i * 7);
    wheel.advance(10_000);
    expect(fired.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(wheel.size).toBe(0);
  });

  it('the coarse clock is the last tick advanced to', () => {
    const wheel = new TimerWheel(10, 8, 3);
    expect(wheel.coarseNowMs).toBe(0);
    wheel.advance(57);
    expect(wheel.coarseNowMs).toBe(50);
  });
});

describe('DeadlineClock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  function fakeClock(): void {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
  }

  it('fires an armed deadline on the real clock, never before it is due', () => {
    fakeClock();
    const clock = new DeadlineClock(10, 64, 5);
    const fired: number[] = [];
    clock.arm(new Deadline('a', () => fired.push(performance.now())), 25);
    vi.advanceTimersByTime(20);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(20);
    expect(fired).toHaveLength(1);
    expect(fired[0]).toBeGreaterThanOrEqual(25);
  });

  it('keeps ticking while the wheel empties between requests, and stops once it stays empty', () => {
    fakeClock();
    const clock = new DeadlineClock(10, 64, 5);
    expect(clock.running).toBe(false);
    const deadline = new Deadline('request', () => {});
    for (let request = 0; request < 10; request++) {
      clock.arm(deadline, 1_000);
      clock.cancel(deadline);
      // Two empty ticks between requests: fewer than the five it may stand empty.
      vi.advanceTimersByTime(20);
      expect(clock.running).toBe(true);
    }
    // Four empty ticks since the last arm: still running; six: stopped.
    vi.advanceTimersByTime(20);
    expect(clock.running).toBe(true);
    vi.advanceTimersByTime(20);
    expect(clock.running).toBe(false);
    // Stopped, its coarse clock catches up when the next deadline is armed.
    vi.advanceTimersByTime(1_000);
    clock.arm(deadline, 1_000);
    expect(clock.running).toBe(true);
    expect(clock.coarseNowMs).toBe(Math.floor(performance.now() / 10) * 10);
  });
});
