import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { FleetSource } from '../../src/fleet/fleet-source.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import type { Source } from '../../src/snapshot/source.ts';
import { exportOf, InMemoryFleetMembers, memberView, serviceOf, sliceOf } from './member-fixtures.ts';

class StaticSource implements Source {
  readonly name = 'static';
  #onSnapshot: ((snapshot: Snapshot) => void) | undefined;
  constructor(readonly objects: readonly AnyResource[]) {}
  async start(onSnapshot: (snapshot: Snapshot) => void): Promise<void> {
    this.#onSnapshot = onSnapshot;
    onSnapshot(new Snapshot(this.objects));
  }
  async stop(): Promise<void> {}
  emit(objects: readonly AnyResource[]): void {
    this.#onSnapshot?.(new Snapshot(objects));
  }
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

function member(cluster: string, ips: readonly string[], serviceName = 'web') {
  return memberView(cluster, {
    exports: [exportOf('shop', 'web', '2026-01-01T00:00:00Z')],
    services: [serviceOf('shop', serviceName)],
    slices: ips.map((ip, i) => sliceOf('shop', 'web', `web-${i}`, [{ ip, port: 8080 }])),
  });
}

const addresses = (s: Snapshot) =>
  s
    .slicesForServiceImport('shop', 'web')
    .flatMap((slice) => slice.endpoints?.flatMap((e) => e.addresses) ?? [])
    .sort();

describe('FleetSource: a change of members’ slices alone', () => {
  it('a slice a member removes after listing it again as a new, equal object leaves the import', async () => {
    const members = new InMemoryFleetMembers([member('east', ['10.0.0.1', '10.0.0.2', '10.0.0.3'])]);
    const snapshots: Snapshot[] = [];
    const source = new FleetSource({
      primary: new StaticSource([]),
      members,
      logger: pino({ level: 'silent' }),
    });
    await source.start((s) => snapshots.push(s));
    // Every slice a new object, one with a new address: a delta of one slice.
    members.publish([member('east', ['10.0.0.9', '10.0.0.2', '10.0.0.3'])]);
    await tick();
    expect(addresses(snapshots.at(-1) as Snapshot)).toEqual(['10.0.0.2', '10.0.0.3', '10.0.0.9']);
    // The last slice removed: its object in the snapshot is the one listed first, not the equal copy after it.
    members.publish([member('east', ['10.0.0.9', '10.0.0.2'])]);
    await tick();
    const last = snapshots.at(-1) as Snapshot;
    expect(last.sliceDelta?.slices).toHaveLength(1);
    expect(addresses(last)).toEqual(['10.0.0.2', '10.0.0.9']);
    await source.stop();
  });

  it('is handed over as a delta of the last snapshot; any other change is combined in full', async () => {
    const primary = new StaticSource([]);
    const east = member('east', ['10.0.0.1', '10.0.0.2']);
    const west = member('west', ['10.1.0.1']);
    const members = new InMemoryFleetMembers([east, west]);
    const snapshots: Snapshot[] = [];
    const source = new FleetSource({ primary, members, logger: pino({ level: 'silent' }) });
    await source.start((s) => snapshots.push(s));
    const first = snapshots.at(-1) as Snapshot;
    expect(addresses(first)).toEqual(['10.0.0.1', '10.0.0.2', '10.1.0.1']);

    // One of east's slices gets a new address; west's view is the same object.
    members.publish([member('east', ['10.0.0.1', '10.0.0.3']), west]);
    await tick();
    const second = snapshots.at(-1) as Snapshot;
    expect(addresses(second)).toEqual(['10.0.0.1', '10.0.0.3', '10.1.0.1']);
    expect(second.sliceDelta?.base).toBe(first);
    expect(second.sliceDelta?.slices).toHaveLength(1);
    expect(second.get('ServiceImport', 'shop', 'web')).toEqual(first.get('ServiceImport', 'shop', 'web'));

    // Members published again unchanged: no new snapshot.
    members.publish([member('east', ['10.0.0.1', '10.0.0.3']), west]);
    await tick();
    expect(snapshots.at(-1)).toBe(second);

    // A member gone changes the import's clusters: combined in full.
    members.publish([member('east', ['10.0.0.1', '10.0.0.3'])]);
    await tick();
    const third = snapshots.at(-1) as Snapshot;
    expect(third.sliceDelta).toBeUndefined();
    expect(addresses(third)).toEqual(['10.0.0.1', '10.0.0.3']);

    // The primary source changes: in full, even if members' slices changed in the same tick.
    members.publish([member('east', ['10.0.0.4'])]);
    primary.emit([]);
    await tick();
    const fourth = snapshots.at(-1) as Snapshot;
    expect(fourth.sliceDelta).toBeUndefined();
    expect(addresses(fourth)).toEqual(['10.0.0.4']);
    await source.stop();
  });
});
