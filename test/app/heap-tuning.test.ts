import { describe, expect, it } from 'vitest';
import { shouldDisablePretenuring, tuneHeapForRequests } from '../../src/app/heap-tuning.ts';

describe('heap tuning', () => {
  it('turns pretenuring off unless a flag chose either way', () => {
    expect(shouldDisablePretenuring([])).toBe(true);
    expect(shouldDisablePretenuring(['--trace-gc', '--max-semi-space-size=16'])).toBe(true);
    for (const chosen of [
      '--allocation-site-pretenuring',
      '--no-allocation-site-pretenuring',
      '--allocation_site_pretenuring',
      '--no-allocation_site_pretenuring',
    ]) {
      expect(shouldDisablePretenuring(['--trace-gc', chosen])).toBe(false);
    }
    // A flag that only contains the words is not the choice.
    expect(shouldDisablePretenuring(['--trace-allocation-site-pretenuring-x'])).toBe(true);
  });

  it("leaves V8 alone when the operator's flag decided", () => {
    expect(tuneHeapForRequests(['--allocation-site-pretenuring'])).toBe(false);
  });
});
