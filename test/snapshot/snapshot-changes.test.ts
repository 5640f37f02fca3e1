import { describe, expect, it } from 'vitest';
import type { AnyResource, EndpointSlice } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import { SnapshotMirror, snapshotChanges } from '../../src/snapshot/snapshot-changes.ts';

const service = (name: string): AnyResource =>
  ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'shop' }, spec: {} }) as AnyResource;
const slice = (service: string, address: string): EndpointSlice => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: `${service}-1`, namespace: 'shop', labels: { 'kubernetes.io/service-name': service } },
  addressType: 'IPv4',
  endpoints: [{ addresses: [address] }],
});
const namespace: AnyResource = {
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'shop' },
} as AnyResource;

/** What a receiver's copy holds, as comparable data. */
const contents = (s: Snapshot) =>
  Object.fromEntries([...s.kinds()].sort().map((k) => [k, Object.fromEntries(s.byKey(k))]));

describe('snapshotChanges and SnapshotMirror', () => {
  it('sends everything first, then only what changed by identity, and the mirror follows', () => {
    const web = service('web');
    const api = service('api');
    const webSlice = slice('web', '10.0.0.1');
    const first = new Snapshot([namespace, web, api, webSlice]);
    const mirror = new SnapshotMirror();

    const initial = snapshotChanges(undefined, first);
    expect(initial.reset).toBe(true);
    expect(initial.set).toHaveLength(4);
    expect(contents(mirror.apply(initial))).toEqual(contents(first));

    const renamed = { ...web, spec: { type: 'ClusterIP' } } as AnyResource;
    const second = new Snapshot([namespace, renamed, webSlice]);
    const changes = snapshotChanges(first, second);
    expect(changes).toEqual({
      reset: false,
      set: [renamed],
      removed: [['Service', 'shop/api']],
      slicesOnly: false,
    });
    expect(contents(mirror.apply(changes))).toEqual(contents(second));
  });

  it('passes a slice-only snapshot on as slice changes, which the mirror indexes like the sender', () => {
    const webSlice = slice('web', '10.0.0.1');
    const first = new Snapshot([namespace, service('web'), webSlice]);
    const mirror = new SnapshotMirror();
    mirror.apply(snapshotChanges(undefined, first));

    const moved = slice('web', '10.0.0.2');
    const second = Snapshot.withEndpointSlices(first, [{ before: webSlice, after: moved }]);
    const changes = snapshotChanges(first, second);
    expect(changes).toEqual({ reset: false, set: [moved], removed: [], slicesOnly: true });
    const copy = mirror.apply(changes);
    expect(copy.slicesForService('shop', 'web')).toEqual([moved]);
    expect(contents(copy)).toEqual(contents(second));

    const third = Snapshot.withEndpointSlices(second, [{ before: moved, after: undefined }]);
    const gone = snapshotChanges(second, third);
    expect(gone.removed).toEqual([['EndpointSlice', 'shop/web-1']]);
    expect(mirror.apply(gone).slicesForService('shop', 'web')).toEqual([]);
  });

  it('finds slice-only changes between snapshots built from scratch, and none between equal ones', () => {
    const web = service('web');
    const a = new Snapshot([namespace, web, slice('web', '10.0.0.1')]);
    const b = new Snapshot([namespace, web, slice('web', '10.0.0.3')]);
    expect(snapshotChanges(a, b).slicesOnly).toBe(true);
    expect(snapshotChanges(b, new Snapshot([...b.kinds()].flatMap((k) => [...b.byKey(k).values()])))).toEqual(
      {
        reset: false,
        set: [],
        removed: [],
        slicesOnly: true,
      },
    );
  });
});
