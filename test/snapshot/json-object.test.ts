import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { sameJsonValue } from '../../src/snapshot/json-object.ts';

const condition = (status: string) => ({
  type: 'Accepted',
  status,
  reason: 'Accepted',
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

describe('sameJsonValue', () => {
  it('compares as JSON would: an undefined property is no property, order of keys does not matter', () => {
    expect(sameJsonValue({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJsonValue({ a: 1, b: [2, { c: 'x' }] }, { b: [2, { c: 'x' }], a: 1 })).toBe(true);
    expect(sameJsonValue({ a: [1, { c: 'x' }] }, { a: [1, { c: 'y' }] })).toBe(false);
    expect(sameJsonValue({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameJsonValue({ a: 1, b: 2 }, { a: 1 })).toBe(false);
    expect(sameJsonValue([1, 2], { 0: 1, 1: 2 })).toBe(false);
    expect(sameJsonValue([1, 2], [1, 2, 3])).toBe(false);
    expect(sameJsonValue(null, {})).toBe(false);
    expect(sameJsonValue('1', 1)).toBe(false);
  });

  const values: unknown[] = [
    null,
    0,
    1,
    '',
    '1',
    true,
    false,
    [],
    {},
    [1, 2],
    [2, 1],
    { a: 1 },
    { a: '1' },
    { a: 1, b: 2 },
    { b: 2, a: 1 },
    { a: null },
    { a: [] },
    { a: {} },
    { parents: [{ parentRef: { name: 'gw' }, conditions: [condition('True')] }] },
    { parents: [{ parentRef: { name: 'gw' }, conditions: [condition('False')] }] },
    { parents: [{ parentRef: { name: 'gw' }, conditions: [condition('True'), condition('True')] }] },
  ];

  it('agrees with util.isDeepStrictEqual on JSON values, key order aside', () => {
    for (const a of values)
      for (const b of values) {
        const copy = JSON.parse(JSON.stringify(b ?? null)) as unknown;
        expect(sameJsonValue(a, b), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(
          isDeepStrictEqual(a, b),
        );
        if (b !== undefined && !JSON.stringify(b).includes('undefined'))
          expect(sameJsonValue(a, copy)).toBe(isDeepStrictEqual(a, copy));
      }
  });
});
