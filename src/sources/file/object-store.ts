import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { AnyResource } from '../../snapshot/resources.ts';

interface Tracked {
  readonly uid: string;
  readonly creationTimestamp: string;
  readonly generation: number;
  readonly spec: unknown;
}

/**
 * Plays the API server's part for objects read from files: uid and creationTimestamp on first sight,
 * `metadata.generation` starting at 1 and raised by one whenever `spec` changes (as the API server does for
 * resources with a status subresource). Values written in the file win.
 */
export class ObjectStore {
  readonly #tracked = new Map<string, Tracked>();
  readonly #now: () => Date;

  constructor(now: () => Date = () => new Date()) {
    this.#now = now;
  }

  /** Returns the objects with server-side metadata filled in; forgets objects no longer present. */
  admit(objects: readonly AnyResource[]): AnyResource[] {
    const seen = new Set<string>();
    const admitted = objects.map((object) => {
      const key = `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;
      seen.add(key);
      const spec = 'spec' in object ? object.spec : undefined;
      const previous = this.#tracked.get(key);
      const tracked: Tracked = previous
        ? {
            ...previous,
            spec,
            generation: isDeepStrictEqual(previous.spec, spec)
              ? previous.generation
              : previous.generation + 1,
          }
        : {
            uid: randomUUID(),
            creationTimestamp: this.#now()
              .toISOString()
              .replace(/\.\d{3}Z$/, 'Z'),
            generation: 1,
            spec,
          };
      this.#tracked.set(key, tracked);
      const meta = object.metadata;
      return {
        ...object,
        metadata: {
          ...meta,
          uid: meta.uid ?? tracked.uid,
          creationTimestamp: meta.creationTimestamp ?? tracked.creationTimestamp,
          generation: meta.generation ?? tracked.generation,
        },
      } as AnyResource;
    });
    for (const key of this.#tracked.keys()) if (!seen.has(key)) this.#tracked.delete(key);
    return admitted;
  }
}
