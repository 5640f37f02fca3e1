import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FleetSource } from '../../src/fleet/fleet-source.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import type { Source } from '../../src/snapshot/source.ts';
import { exportOf, InMemoryFleetMembers, memberView, serviceOf, sliceOf } from './member-fixtures.ts';

/** A hub that has synced only when the test says so (emit), as a Kubernetes source's first snapshot comes. */
class LateSource implements Source {
  readonly name = 'late';
  #onSnapshot: ((snapshot: Snapshot) => void) | undefined;
  async start(onSnapshot: (snapshot: Snapshot) => void): Promise<void> {
    this.#onSnapshot = onSnapshot;
  }
  async stop(): Promise<void> {}
  emit(objects: readonly AnyResource[]): void {
    this.#onSnapshot?.(new Snapshot(objects));
  }
}

const exported = (state: 'connecting' | 'synced' | 'error', reason?: string) =>
  memberView('east', {
    state,
    ...(reason ? { reason } : {}),
    ...(state === 'synced'
      ? {
          exports: [exportOf('shop', 'web', '2026-01-01T00:00:00Z')],
          services: [serviceOf('shop', 'web')],
          slices: [sliceOf('shop', 'web', 'web-0', [{ ip: '10.0.0.1', port: 8080 }])],
        }
      : {}),
  });

const imported = (s: Snapshot | undefined) => s?.get('ServiceImport', 'shop', 'web') !== undefined;

describe('FleetSource: the first snapshot waits for the members’ first lists', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('holds the first snapshot while a member is on its first list, then carries its imports', async () => {
    const primary = new LateSource();
    const members = new InMemoryFleetMembers([exported('connecting', 'waiting for the first list')]);
    const snapshots: Snapshot[] = [];
    const source = new FleetSource({ primary, members, logger: pino({ level: 'silent' }) });
    await source.start((s) => snapshots.push(s));
    primary.emit([]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(snapshots).toEqual([]);
    members.publish([exported('synced')]);
    await vi.advanceTimersByTimeAsync(1);
    expect(snapshots).toHaveLength(1);
    expect(imported(snapshots[0])).toBe(true);
    await source.stop();
  });

  it('does not wait for a member that failed, nor past the timeout for one still listing', async () => {
    const failedHub = new LateSource();
    const failed = new FleetSource({
      primary: failedHub,
      members: new InMemoryFleetMembers([exported('error', 'connection refused')]),
      logger: pino({ level: 'silent' }),
    });
    const first: Snapshot[] = [];
    await failed.start((s) => first.push(s));
    failedHub.emit([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(first).toHaveLength(1);
    await failed.stop();

    const primary = new LateSource();
    const slow = new FleetSource({
      primary,
      members: new InMemoryFleetMembers([exported('connecting', 'waiting for the first list')]),
      logger: pino({ level: 'silent' }),
      firstListTimeoutMs: 5000,
    });
    const snapshots: Snapshot[] = [];
    await slow.start((s) => snapshots.push(s));
    primary.emit([]);
    await vi.advanceTimersByTimeAsync(4999);
    expect(snapshots).toEqual([]);
    await vi.advanceTimersByTimeAsync(10);
    expect(snapshots).toHaveLength(1);
    expect(imported(snapshots[0])).toBe(false);
    await slow.stop();
  });
});
