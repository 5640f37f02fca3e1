import { describe, expect, it } from 'vitest';
import type { BackendCluster, UpstreamEndpoint } from '../../src/ir/route-table.ts';
import { movedPoolKeys } from '../../src/proxy/compile/compile-backends.ts';

const endpoint = (address: string): UpstreamEndpoint => ({
  key: `${address}:8080`,
  address,
  port: 8080,
  cluster: 'east',
  ready: true,
  weight: 1,
});
const cluster = (
  tiers: UpstreamEndpoint[][],
  protocol: BackendCluster['protocol'] = 'http1',
): BackendCluster => ({ id: 'Service/shop/web:80', protocol, tiers }) as unknown as BackendCluster;
const nonZero = (moved: Map<string, number>) => [...moved].filter(([, n]) => n !== 0);

describe('pool keys moved by an endpoint change', () => {
  it('names only the pools of endpoints added or removed; the same endpoint objects move nothing', () => {
    const kept = [endpoint('10.0.0.1'), endpoint('10.0.0.2')];
    const gone = endpoint('10.0.0.3');
    const added = endpoint('10.0.0.4');
    const moved = movedPoolKeys(cluster([[...kept, gone]]), cluster([[...kept], [added]]));
    expect(nonZero(moved)).toEqual([
      ['10.0.0.4:8080', 1],
      ['10.0.0.3:8080', -1],
    ]);
  });

  it('an equal endpoint that is another object is counted out and in again: no pool moves', () => {
    const before = cluster([[endpoint('10.0.0.1')]]);
    const after = cluster([[endpoint('10.0.0.1')]]);
    expect(nonZero(movedPoolKeys(before, after))).toEqual([]);
  });

  it('a protocol change moves every pool (h2c pools are other pools)', () => {
    const same = [endpoint('10.0.0.1')];
    expect(nonZero(movedPoolKeys(cluster([same]), cluster([same], 'h2c')))).toEqual([
      ['h2c|10.0.0.1:8080', 1],
      ['10.0.0.1:8080', -1],
    ]);
  });
});
