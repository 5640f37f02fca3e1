import { describe, expect, it } from 'vitest';
import { FlowTable } from '../../src/proxy/listen/udp-flow-table.ts';

describe('UDP flow table (fake clock)', () => {
  it('keeps a flow while datagrams come within the idle timeout, and expires it after', () => {
    const table = new FlowTable<string>({ idleTimeoutMs: 1_000, maxFlows: 10 });
    table.add('10.0.0.1 5000', 'flow-a', 0);
    expect(table.touch('10.0.0.1 5000', 900)).toBe('flow-a');
    expect(table.expire(1_800)).toEqual([]);
    expect(table.touch('10.0.0.1 5000', 1_800)).toBe('flow-a');
    expect(table.expire(2_799)).toEqual([]);
    expect(table.expire(2_800)).toEqual(['flow-a']);
    expect(table.touch('10.0.0.1 5000', 2_801)).toBeUndefined();
    expect(table.size).toBe(0);
  });

  it('expires idle flows oldest first and stops at the first live one', () => {
    const table = new FlowTable<string>({ idleTimeoutMs: 100, maxFlows: 10 });
    table.add('a', 'A', 0);
    table.add('b', 'B', 10);
    table.add('c', 'C', 20);
    table.touch('a', 50); // a is now the most recently active
    expect(table.expire(115)).toEqual(['B']);
    expect(table.expire(125)).toEqual(['C']);
    expect(table.expire(149)).toEqual([]);
    expect(table.expire(150)).toEqual(['A']);
  });

  it('stays bounded: a new flow evicts the one idle longest, and returns it to be closed and counted', () => {
    const table = new FlowTable<number>({ idleTimeoutMs: 60_000, maxFlows: 3 });
    expect(table.add('s1', 1, 0)).toBeUndefined();
    expect(table.add('s2', 2, 1)).toBeUndefined();
    expect(table.add('s3', 3, 2)).toBeUndefined();
    table.touch('s1', 3);
    expect(table.add('s4', 4, 4)).toBe(2);
    expect(table.add('s5', 5, 5)).toBe(3);
    expect(table.size).toBe(3);
    expect(table.touch('s1', 6)).toBe(1);
  });

  it('holds a flood of 100,000 sources to its cap, evicting one flow per new source', () => {
    const table = new FlowTable<number>({ idleTimeoutMs: 60_000, maxFlows: 1_000 });
    let evicted = 0;
    for (let i = 0; i < 100_000; i++)
      if (table.add(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255} 4000`, i, i) !== undefined) evicted++;
    expect(table.size).toBe(1_000);
    expect(evicted).toBe(99_000);
  });

  it('re-adding a live client does not evict anyone', () => {
    const table = new FlowTable<string>({ idleTimeoutMs: 1_000, maxFlows: 1 });
    table.add('a', 'A1', 0);
    expect(table.add('a', 'A2', 1)).toBeUndefined();
    expect(table.touch('a', 2)).toBe('A2');
  });

  it('removes only the flow it is given, and the flows a predicate names', () => {
    const table = new FlowTable<string>({ idleTimeoutMs: 1_000, maxFlows: 10 });
    table.add('a', 'A', 0);
    table.add('b', 'B', 0);
    expect(table.delete('a', 'other')).toBe(false);
    expect(table.delete('a', 'A')).toBe(true);
    table.add('c', 'C', 0);
    expect(table.removeWhere((f) => f === 'C')).toEqual(['C']);
    expect(table.clear()).toEqual(['B']);
  });
});
