import { describe, expect, it } from 'vitest';
import { applyMemberChange, deriveState, type FleetState } from '../../src/fleet/derive-imports.ts';
import type { MemberState, MemberView } from '../../src/fleet/member-view.ts';
import { mulberry32 } from '../../src/lb/seeded-random.ts';
import type { AnyResource, EndpointSlice } from '../../src/snapshot/resources.ts';
import { objectKey } from '../../src/snapshot/snapshot.ts';
import { exportOf, memberView, serviceOf, sliceOf } from './member-fixtures.ts';

/** mulberry32: the same sequence for the same seed, so a failing case repeats. */
const seeded = mulberry32;

const SERVICES = ['web', 'api', 'db'] as const;
const CLUSTERS = ['a', 'b', 'c', 'd', 'e', 'f'] as const;
const STATES: readonly MemberState[] = ['synced', 'synced', 'synced', 'stale', 'connecting', 'refused'];
const DATES = ['2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z', '2026-03-01T00:00:00Z', 'not a date'];

/** A random member: which of the services it exports, their ports (conflicts), slices and endpoints. */
function randomMember(random: () => number, name: string): MemberView {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const exported = SERVICES.filter(() => random() < 0.6);
  return memberView(name, {
    state: pick(STATES),
    properties: random() < 0.5 ? { 'topology.kubernetes.io/region': pick(['r1', 'r2']) } : {},
    exports: exported.map((s) => exportOf('shop', s, pick(DATES))),
    // Now and then an export without its Service (invalid) or a Service on another port (a conflict).
    services: exported
      .filter(() => random() < 0.9)
      .map((s) =>
        serviceOf('shop', s, { ports: [{ name: 'http', protocol: 'TCP', port: pick([80, 80, 81]) }] }),
      ),
    slices: exported.flatMap((s) =>
      Array.from({ length: Math.floor(random() * 3) }, (_, i): EndpointSlice => {
        const endpoints = Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({
          ip:
            random() < 0.05
              ? 'not-an-ip'
              : `10.0.${Math.floor(random() * 4)}.${1 + Math.floor(random() * 4)}`,
          port: 8080,
        }));
        return sliceOf('shop', s, `${s}-${i}`, endpoints);
      }),
    ),
  });
}

const slicesOf = (objects: readonly AnyResource[]) =>
  new Map(
    objects.filter((o): o is EndpointSlice => o.kind === 'EndpointSlice').map((s) => [objectKey(s), s]),
  );
const noLocal = () => false;

describe('a member change derived as a delta', () => {
  it('equals the whole fleet derived again, over random changes (seeded)', () => {
    for (const seed of [1, 2, 3, 42, 2026]) {
      const random = seeded(seed);
      let views = new Map<string, MemberView>(
        CLUSTERS.slice(0, 4).map((name) => [name, randomMember(random, name)]),
      );
      const hasLocalImport = (_: string, name: string) => name === 'db';
      let state: FleetState = deriveState([...views.values()], hasLocalImport);
      for (let change = 0; change < 60; change++) {
        const name = CLUSTERS[Math.floor(random() * CLUSTERS.length)] as string;
        const gone = random() < 0.15;
        const view = gone ? undefined : randomMember(random, name);
        const previous = state;
        const step = applyMemberChange(previous, name, view);
        if (view) views.set(name, view);
        else views.delete(name);
        views = new Map(views);
        const full = deriveState([...views.values()], hasLocalImport).derivation;
        expect(step.state.derivation, `seed ${seed}, change ${change}`).toEqual(full);

        // The slice changes take the previous derived slices to the new ones.
        const slices = slicesOf(previous.derivation.objects);
        for (const c of step.slices) {
          const key = objectKey((c.after ?? c.before) as EndpointSlice);
          expect(slices.get(key)).toEqual(c.before);
          if (c.after) slices.set(key, c.after);
          else slices.delete(key);
        }
        expect(slices).toEqual(slicesOf(full.objects));

        // Imports the member did not export to are the previous parts, untouched.
        for (const [key, part] of previous.imports)
          if (!step.changedImports.includes(key)) expect(step.state.imports.get(key)).toBe(part);
        state = step.state;
      }
    }
  });

  it('re-derives only the imports the member touches and names the one slice that changed', () => {
    const member = (name: string, ip: string, services: readonly string[]) =>
      memberView(name, {
        exports: services.map((s) => exportOf('shop', s, '2026-01-01T00:00:00Z')),
        services: services.map((s) => serviceOf('shop', s)),
        slices: services.map((s) => sliceOf('shop', s, `${s}-1`, [{ ip, port: 8080 }])),
      });
    const east = member('east', '10.0.0.1', ['web', 'api']);
    const west = member('west', '10.1.0.1', ['web', 'db']);
    const before = deriveState([east, west], noLocal);
    const westMoved = memberView('west', {
      exports: west.serviceExports,
      services: west.services,
      slices: [
        west.endpointSlices[0] as EndpointSlice,
        sliceOf('shop', 'db', 'db-1', [{ ip: '10.1.0.9', port: 8080 }]),
      ],
    });
    const step = applyMemberChange(before, 'west', westMoved);

    expect(step.changedImports).toEqual(['shop/db', 'shop/web']);
    expect(step.state.imports.get('shop/api')).toBe(before.imports.get('shop/api'));
    expect(step.othersChanged).toBe(false);
    expect(step.slices).toHaveLength(1);
    expect(step.slices[0]?.before?.metadata.name).toBe('west.db-1');
    expect(step.slices[0]?.after?.endpoints?.[0]?.addresses).toEqual(['10.1.0.9']);
    // The unchanged slices are the same objects; the previous state is as it was.
    const web = (s: FleetState) => s.imports.get('shop/web')?.slices;
    expect(web(step.state)).toEqual(web(before));
    expect(web(step.state)?.[0]).toBe(web(before)?.[0]);
    expect(before.derivation).toEqual(deriveState([east, west], noLocal).derivation);
    expect(Object.isFrozen(step.state)).toBe(true);

    // The same view again: nothing to do.
    expect(applyMemberChange(step.state, 'west', westMoved)).toMatchObject({
      state: step.state,
      slices: [],
      othersChanged: false,
    });
  });

  it('says when more than slices changed: a member gone, a conflicting spec, a new property', () => {
    const web = (name: string, port: number, properties: Record<string, string> = {}) =>
      memberView(name, {
        properties,
        exports: [exportOf('shop', 'web', name === 'east' ? '2026-01-01T00:00:00Z' : '2026-02-01T00:00:00Z')],
        services: [serviceOf('shop', 'web', { ports: [{ name: 'http', protocol: 'TCP', port }] })],
        slices: [sliceOf('shop', 'web', 'web-1', [{ ip: '10.0.0.1', port: 8080 }])],
      });
    const before = deriveState([web('east', 80), web('west', 80)], noLocal);
    expect(applyMemberChange(before, 'west', undefined).othersChanged).toBe(true);
    // west's export is the younger: its conflicting port leaves the import's spec as it is.
    expect(applyMemberChange(before, 'west', web('west', 81)).othersChanged).toBe(false);
    expect(applyMemberChange(before, 'east', web('east', 81)).othersChanged).toBe(true);
    expect(applyMemberChange(before, 'west', web('west', 80, { zone: 'z' })).othersChanged).toBe(true);
  });
});
