import { describe, expect, it } from 'vitest';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { ObjectStore } from '../../src/sources/file/object-store.ts';
import type { CrdValidator } from '../../src/validation/index.ts';

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

  it('takes an object written as before as the same object, without validating it again', () => {
    const validated: unknown[] = [];
    const validator = {
      validate: (object: unknown) => {
        validated.push(object);
        return { object, errors: [], unknownFields: [], warnings: [] };
      },
    } as unknown as CrdValidator;
    const store = new ObjectStore(undefined, validator);
    const admit = (object: AnyResource, source: string) =>
      store.admitFiles(new Map([['r.yaml', [{ object, source }]]])).objects[0];
    const written = route({ hostnames: ['a'] });
    const first = admit(written, 'text a');
    // The same parsed object (its file not read again), then the same text parsed again.
    expect(admit(written, 'text a')).toBe(first);
    expect(admit(route({ hostnames: ['a'] }), 'text a')).toBe(first);
    expect(validated).toHaveLength(1);
    const changed = admit(route({ hostnames: ['b'] }), 'text b');
    expect(changed).not.toBe(first);
    expect(changed?.metadata.generation).toBe(2);
    expect(validated).toHaveLength(2);
  });
});
