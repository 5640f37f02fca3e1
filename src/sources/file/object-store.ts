import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { AnyResource } from '../../snapshot/resources.ts';
import type { CrdValidator } from '../../validation/index.ts';
import type { ManifestProblem } from './manifest-parser.ts';

interface Tracked {
  readonly uid: string;
  readonly creationTimestamp: string;
  readonly generation: number;
  readonly spec: unknown;
}

/** The outcome of one reload: the objects in effect and the ones refused, each naming file, object, field. */
export interface Admission {
  readonly objects: AnyResource[];
  readonly invalid: readonly ManifestProblem[];
  /** How many objects were refused (several problems may name one object). */
  readonly invalidObjects: number;
}

/**
 * Plays the API server's part for objects read from files: uid and creationTimestamp on first sight,
 * `metadata.generation` starting at 1 and raised by one whenever `spec` changes (as the API server does for
 * resources with a status subresource). Values written in the file win. With a validator it also does what
 * `kubectl apply` would have met: custom resources are pruned, defaulted and validated against their CRDs;
 * an invalid one is refused and its last valid version (if any) stays in effect.
 */
export class ObjectStore {
  readonly #tracked = new Map<string, Tracked>();
  readonly #lastValid = new Map<string, AnyResource>();
  readonly #now: () => Date;
  readonly #validator: CrdValidator | undefined;

  constructor(now: () => Date = () => new Date(), validator?: CrdValidator) {
    this.#now = now;
    this.#validator = validator;
  }

  /** Returns the objects with server-side metadata filled in; forgets objects no longer present. */
  admit(objects: readonly AnyResource[]): AnyResource[] {
    return this.admitFiles(new Map([['', objects]])).objects;
  }

  /** admit() for objects grouped by the file they came from, so that problems can name the file. */
  admitFiles(byFile: ReadonlyMap<string, readonly AnyResource[]>): Admission {
    const seen = new Set<string>();
    const admitted: AnyResource[] = [];
    const invalid: ManifestProblem[] = [];
    let invalidObjects = 0;
    for (const [file, objects] of byFile) {
      for (const object of objects) {
        const key = `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;
        seen.add(key);
        const checked = this.#validate(key, file, object, invalid);
        if (checked === 'invalid') invalidObjects++;
        const effective = checked === 'invalid' ? this.#lastValid.get(key) : checked;
        if (effective) admitted.push(this.#track(key, effective));
        else this.#tracked.delete(key);
      }
    }
    for (const key of this.#tracked.keys()) if (!seen.has(key)) this.#tracked.delete(key);
    for (const key of this.#lastValid.keys()) if (!seen.has(key)) this.#lastValid.delete(key);
    return { objects: admitted, invalid, invalidObjects };
  }

  #validate(
    key: string,
    file: string,
    object: AnyResource,
    invalid: ManifestProblem[],
  ): AnyResource | 'invalid' {
    if (!this.#validator) return object;
    const previous = this.#lastValid.get(key);
    let result: ReturnType<CrdValidator['validate']>;
    try {
      result = this.#validator.validate(object as never, previous as never);
    } catch (error) {
      // A validator bug costs this one object, like any other invalid input.
      result = {
        object: object as never,
        errors: [{ reason: 'InternalError', field: '', message: `validation failed: ${String(error)}` }],
        warnings: [],
      };
    }
    if (result.errors.length === 0) {
      const valid = result.object as unknown as AnyResource;
      this.#lastValid.set(key, valid);
      return valid;
    }
    const ns = object.metadata.namespace ? `${object.metadata.namespace}/` : '';
    const kept = previous ? 'the last valid version stays in effect' : 'not loaded';
    for (const error of result.errors) {
      const where = error.field ? `${error.field}: ` : '';
      invalid.push({
        file,
        line: 0,
        message: `${object.kind} ${ns}${object.metadata.name} (${kept}): ${where}${error.message}`,
      });
    }
    return 'invalid';
  }

  #track(key: string, object: AnyResource): AnyResource {
    const spec = 'spec' in object ? object.spec : undefined;
    const previous = this.#tracked.get(key);
    const tracked: Tracked = previous
      ? {
          ...previous,
          spec,
          generation: isDeepStrictEqual(previous.spec, spec) ? previous.generation : previous.generation + 1,
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
  }
}
