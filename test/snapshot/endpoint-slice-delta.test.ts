import { describe, expect, it } from 'vitest';
import type { AnyResource, EndpointSlice } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import { diffSnapshots } from '../../src/snapshot/snapshot-diff.ts';
import { httpRoute, importedSlice, service, serviceSlice } from '../support/manifests.ts';

const object = (o: unknown): AnyResource => o as AnyResource;
const web = (name: string, port: number) =>
  serviceSlice(name, 'web', 'default', { port, pod: `${name}-${port}` }) as EndpointSlice;
const imported = (name: string, cluster: string, port: number) =>
  importedSlice(name, 'web', 'default', cluster, { port }) as EndpointSlice;

/** What a reader sees of the slices: by key, and per Service and import, ordered by name. */
function sliceView(snapshot: Snapshot) {
  const names = (slices: readonly EndpointSlice[]) => slices.map((s) => s.metadata.name).sort();
  return {
    keys: [...snapshot.byKey('EndpointSlice').keys()].sort(),
    list: snapshot.list('EndpointSlice').map((s) => s.metadata.name),
    web: names(snapshot.slicesForService('default', 'web')),
    api: names(snapshot.slicesForService('default', 'api')),
    import: names(snapshot.slicesForServiceImport('default', 'web')),
    size: snapshot.size,
  };
}

describe('Snapshot.withEndpointSlices', () => {
  const others = [
    object(service('web', 'default')),
    object(service('api', 'default')),
    object(httpRoute('r', 'default', { parentRefs: [{ name: 'gw' }] })),
  ];
  const a = web('web-a', 1);
  const b = web('web-b', 2);
  const east = imported('east', 'east-1', 3);
  const base = new Snapshot([...others, a, b, east]);

  it('indexes as a snapshot built from every object would: added, changed, removed, relabelled slices', () => {
    const b2 = web('web-b', 20);
    const c = web('web-c', 4);
    const moved = serviceSlice('web-a', 'api', 'default', { port: 5 }) as EndpointSlice;
    const west = imported('west', 'west-1', 6);
    const next = Snapshot.withEndpointSlices(base, [
      { before: a, after: moved },
      { before: b, after: b2 },
      { before: undefined, after: c },
      { before: east, after: undefined },
      { before: undefined, after: west },
    ]);
    expect(sliceView(next)).toEqual(sliceView(new Snapshot([...others, moved, b2, c, west])));
    expect(next.slicesForService('default', 'api')).toEqual([moved]);
    expect(next.get('EndpointSlice', 'default', 'web-b')).toBe(b2);
    // The base is untouched.
    expect(sliceView(base)).toEqual(sliceView(new Snapshot([...others, a, b, east])));
  });

  it('shares every other kind with its base, and tells a diff what changed without comparing', () => {
    const b2 = web('web-b', 20);
    const routes = base.list('HTTPRoute');
    const next = Snapshot.withEndpointSlices(base, [{ before: b, after: b2 }]);
    expect(next.list('HTTPRoute')).toBe(routes);
    expect(next.byKey('Service')).toBe(base.byKey('Service'));
    expect(next.sliceDelta?.base).toBe(base);
    expect(diffSnapshots(base, next)).toEqual({ kind: 'slices', slices: [{ before: b, after: b2 }] });
    // From any other snapshot the diff compares as before.
    const copy = new Snapshot([...others, a, b, east]);
    expect(diffSnapshots(copy, next)).toEqual({ kind: 'slices', slices: [{ before: b, after: b2 }] });
    const third = Snapshot.withEndpointSlices(next, [{ before: a, after: undefined }]);
    expect(diffSnapshots(base, third).kind).toBe('slices');
    expect(third.sliceDelta?.base).toBe(next);
  });

  it('removing the last slice of a kind leaves no EndpointSlice bucket', () => {
    const lone = new Snapshot([...others, a]);
    const next = Snapshot.withEndpointSlices(lone, [{ before: a, after: undefined }]);
    expect([...next.kinds()]).not.toContain('EndpointSlice');
    expect(next.slicesForService('default', 'web')).toEqual([]);
  });
});
