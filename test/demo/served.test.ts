import { describe, expect, it } from 'vitest';
import {
  type DemoServedView,
  type ServedFleet,
  waitForHealth,
  waitForMembers,
} from '../../src/demo/served.ts';
import type { MemberContents } from '../../src/demo/world-protocol.ts';

/** A view of the gateway as the demo's admin routes read it; a timeout of 0 answers from one look. */
function view(
  endpoints: Record<string, { key: string; healthy: boolean }[]>,
  fleet?: ServedFleet,
): DemoServedView & { settledCalls: number } {
  const served = {
    settledCalls: 0,
    balancers: async () =>
      Object.fromEntries(Object.entries(endpoints).map(([id, list]) => [id, { endpoints: list }])),
    fleet: () => fleet,
    settled: async () => {
      served.settledCalls++;
    },
  };
  return served;
}

const member = (cluster: string, serviceExports: string[]): MemberContents => ({
  cluster,
  serviceExports,
  services: 4,
  endpointSlices: 9,
});

const fleet = (exports: [string, string][]): ServedFleet => ({
  members: [
    { name: 'east-1', counts: { services: 4, endpointSlices: 9 } },
    { name: 'east-2', counts: { services: 4, endpointSlices: 9 } },
  ],
  exports: exports.map(([cluster, name]) => ({ cluster, namespace: 'demo', name })),
});

describe('what the demo admin routes wait for', () => {
  it('a stop or start: every balancer that has one of the pods has its verdict', async () => {
    const gateway = view({
      web: [
        { key: '127.0.0.1:1', healthy: false },
        { key: '127.0.0.1:2', healthy: true },
      ],
      'web-east-west': [{ key: '127.0.0.1:1', healthy: false }],
    });
    expect(await waitForHealth(gateway, new Set(['127.0.0.1:1']), false, 0)).toBe(true);
    expect(await waitForHealth(gateway, new Set(['127.0.0.1:1']), true, 0)).toBe(false);
    // One of two pods not down yet: not served.
    expect(await waitForHealth(gateway, new Set(['127.0.0.1:1', '127.0.0.1:2']), false, 0)).toBe(false);
    // A pod no balancer has: nothing serves it, nothing to wait for.
    expect(await waitForHealth(gateway, new Set(['127.0.0.1:9']), true, 0)).toBe(true);
  });

  it('a kubectl edit: the fleet view holds what the members hold, then the table made from it is applied', async () => {
    const members = [member('east-1', ['demo/api']), member('east-2', ['demo/api', 'demo/web'])];
    const behind = view(
      {},
      fleet([
        ['east-1', 'api'],
        ['east-1', 'web'],
        ['east-2', 'api'],
        ['east-2', 'web'],
      ]),
    );
    expect(await waitForMembers(behind, members, 0)).toEqual(['east-1']);
    expect(behind.settledCalls).toBe(0);

    const caughtUp = view(
      {},
      fleet([
        ['east-1', 'api'],
        ['east-2', 'api'],
        ['east-2', 'web'],
      ]),
    );
    expect(await waitForMembers(caughtUp, members, 0)).toEqual([]);
    expect(caughtUp.settledCalls).toBe(1);
  });

  it('counts Services and EndpointSlices too, and skips members the gateway does not watch', async () => {
    const gateway = view({}, fleet([['east-1', 'api']]));
    expect(
      await waitForMembers(gateway, [{ ...member('east-1', ['demo/api']), endpointSlices: 8 }], 0),
    ).toEqual(['east-1']);
    expect(await waitForMembers(gateway, [member('west-9', ['demo/api'])], 0)).toEqual([]);
    expect(await waitForMembers(view({}), [member('east-1', [])], 0)).toEqual([]);
  });
});
