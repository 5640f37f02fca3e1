import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Debouncer } from '../../src/sources/kube/debouncer.ts';

describe('Debouncer', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits for a quiet period, but never past the bound of a burst', () => {
    const fn = vi.fn();
    const d = new Debouncer(fn, 100, 300);
    d.trigger();
    vi.advanceTimersByTime(99);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
    // A steady stream every 50 ms still gets through at the bound.
    for (let i = 0; i < 8; i++) {
      d.trigger();
      vi.advanceTimersByTime(50);
    }
    expect(fn).toHaveBeenCalledTimes(2);
  });

  it('a change that needs less waits less; one that needs the usual time after it resets the wait', () => {
    const fn = vi.fn();
    const d = new Debouncer(fn, 100, 1000);
    d.trigger(5);
    d.trigger(5);
    vi.advanceTimersByTime(5);
    expect(fn).toHaveBeenCalledTimes(1);
    d.trigger(5);
    d.trigger();
    vi.advanceTimersByTime(5);
    expect(fn).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(95);
    expect(fn).toHaveBeenCalledTimes(2);
    expect(d.pending).toBe(false);
  });
});
