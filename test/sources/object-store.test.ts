import { describe, expect, it } from 'vitest';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { ObjectStore } from '../../src/sources/file/object-store.ts';

const route = (spec: unknown, labels?: Record<string, string>): AnyResource =>
  ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'r', namespace: 'ns', ...(labels ? { labels } : {}) },
    spec,
  }) as AnyResource;

describe('ObjectStore plays the API server for objects read from files', () => {
  it('starts generation at 1 and raises it only when spec changes', () => {
    const store = new ObjectStore(() => new Date('2026-01-01T00:00:00.123Z'));
    const [first] = store.admit([route({ hostnames: ['a'] })]);
    expect(first?.metadata).toMatchObject({ generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' });
    expect(store.admit([route({ hostnames: ['a'] }, { team: 'x' })])[0]?.metadata.generation).toBe(1);
    expect(store.admit([route({ hostnames: ['b'] })])[0]?.metadata.generation).toBe(2);
  });

  it('keeps uid and creationTimestamp across updates and forgets deleted objects', () => {
    let now = new Date('2026-01-01T00:00:00Z');
    const store = new ObjectStore(() => now);
    const [created] = store.admit([route({})]);
    now = new Date('2026-01-02T00:00:00Z');
    const [updated] = store.admit([route({ x: 1 })]);
    expect(updated?.metadata.uid).toBe(created?.metadata.uid);
    expect(updated?.metadata.creationTimestamp).toBe('2026-01-01T00:00:00Z');
    store.admit([]);
    const [recreated] = store.admit([route({ x: 1 })]);
    expect(recreated?.metadata).toMatchObject({ generation: 1, creationTimestamp: '2026-01-02T00:00:00Z' });
    expect(recreated?.metadata.uid).not.toBe(created?.metadata.uid);
  });
});
