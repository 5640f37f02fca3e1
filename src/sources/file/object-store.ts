import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { runAllSteps, type Steps } from '../../ir/steps.ts';
import type { AnyResource } from '../../snapshot/resources.ts';
import type { CrdValidator } from '../../validation/index.ts';
import {
  type FieldLocation,
  type ManifestProblem,
  pathSegments as pathSegmentsOf,
} from './manifest-parser.ts';

/**
 * What the API server does with fields a schema does not declare and keys written twice (KEP-2885):
 * `Strict`, `kubectl apply`'s default, refuses the object; `Warn` drops them (the last of repeated keys wins) and
 * warns. Errors of type, value or rule refuse the object either way.
 */
export type FieldValidation = 'Strict' | 'Warn';

/** An object to admit, with where it was written when it comes from a file. */
export interface WrittenObject {
  readonly object: AnyResource;
  /** The line of the field at a path (field.Path syntax); the object's first line when absent. */
  readonly locate?: (path: string) => number;
  readonly line?: number;
  readonly duplicates?: readonly FieldLocation[];
  /** The text it was written as (a YAML document): the same text as last time is the same object. */
  readonly source?: string;
}

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
/** What admitting one object gave, kept while the object is written the same. */
interface Admitted {
  readonly file: string;
  /** The object as written (parsed), and the text it was parsed from. */
  readonly written: AnyResource;
  readonly source: string | undefined;
  /** What took effect: undefined when it was refused and had no valid version before. */
  readonly effective: AnyResource | undefined;
  readonly invalid: boolean;
  readonly problems: readonly PlacedProblem[];
}

/**
 * A problem of an object, its line counted from the object's first line: the same text gives the same problems
 * wherever it moves in its file, and the line is read when the problems are listed (invalidIn), from where the
 * object is written then.
 */
interface PlacedProblem {
  readonly from: number;
  readonly message: string;
  readonly warning?: true;
}

/** One file's objects as last admitted. */
interface FileAdmission {
  readonly written: readonly WrittenObject[];
  /** Each written object's key, by the same index. */
  readonly keys: readonly string[];
  readonly outcomes: ReadonlyMap<string, Admitted>;
  /** The positions whose object has problems, with what admitting it gave. */
  readonly withProblems: readonly { readonly index: number; readonly outcome: Admitted }[];
  readonly invalidObjects: number;
}

/** What one update changed in what is in effect. */
export interface AdmissionChanges {
  /** Objects now in effect that were not (or were, as another object). */
  readonly set: readonly AnyResource[];
  /** Objects no longer in effect, as they were. */
  readonly removed: readonly AnyResource[];
}

export class ObjectStore {
  readonly #tracked = new Map<string, Tracked>();
  /**
   * By object key. An object written as before (the same parsed object: its file was not parsed anew; or one
   * parsed from the same text, wherever it now is in its file: problems are placed from its first line) takes
   * effect as the same object: no
   * validation again, and downstream (snapshot diffs, the translation thread) sees by identity that it did not
   * change.
   */
  readonly #admitted = new Map<string, Admitted>();
  /** What each file's objects gave, by the array of objects it was given. */
  readonly #files = new Map<string, FileAdmission>();
  readonly #lastValid = new Map<string, AnyResource>();
  readonly #now: () => Date;
  readonly #validator: CrdValidator | undefined;
  readonly #fieldValidation: FieldValidation;

  constructor(
    now: () => Date = () => new Date(),
    validator?: CrdValidator,
    fieldValidation: FieldValidation = 'Strict',
  ) {
    this.#now = now;
    this.#validator = validator;
    this.#fieldValidation = fieldValidation;
  }

  /** Returns the objects with server-side metadata filled in; forgets objects no longer present. */
  admit(objects: readonly AnyResource[]): AnyResource[] {
    return this.admitFiles(new Map([['', objects.map((object) => ({ object }))]])).objects;
  }

  /** admit() for objects grouped by the file they came from, so that problems can name file, line and field. */
  admitFiles(byFile: ReadonlyMap<string, readonly WrittenObject[]>): Admission {
    return runAllSteps(this.admitFilesInSteps(byFile));
  }

  /** admitFiles as steps (ir/steps.ts): a pause is possible after each object validated. */
  *admitFilesInSteps(byFile: ReadonlyMap<string, readonly WrittenObject[]>): Steps<Admission> {
    const changed = new Map<string, readonly WrittenObject[] | undefined>(byFile);
    for (const file of this.#files.keys()) if (!byFile.has(file)) changed.set(file, undefined);
    yield* this.updateFilesInSteps(changed);
    const objects: AnyResource[] = [];
    for (const file of byFile.keys())
      for (const outcome of this.#files.get(file)?.outcomes.values() ?? [])
        if (outcome.effective) objects.push(outcome.effective);
    return { objects, ...this.invalidIn(byFile.keys()) };
  }

  /**
   * Admits the objects of the files that changed (undefined: the file is gone); the other files' objects stay as
   * they were, unvisited, so that an edit costs its file, not the folder. A file given the very array it was
   * given last time is unchanged. Returns the objects that took effect (new, or not the same object as before) and
   * those no longer in effect. Steps: a pause is possible after each object validated, and every 64 others.
   */
  *updateFilesInSteps(
    changed: ReadonlyMap<string, readonly WrittenObject[] | undefined>,
  ): Steps<AdmissionChanges> {
    const previousEffective = new Map<string, AnyResource | undefined>();
    const left: [string, Admitted][] = [];
    const seen = new Set<string>();
    let walked = 0;
    for (const [file, written] of changed) {
      const old = this.#files.get(file);
      if (old !== undefined && old.written === written) continue;
      const changedAt =
        old === undefined || written === undefined ? undefined : this.#changedPositions(old, written);
      if (old !== undefined && written !== undefined && changedAt !== undefined) {
        walked += yield* this.#admitChanged(file, old, written, changedAt, previousEffective, left, seen);
        continue;
      }
      for (const [key, outcome] of old?.outcomes ?? []) {
        if (!previousEffective.has(key)) previousEffective.set(key, outcome.effective);
        left.push([key, outcome]);
      }
      if (written === undefined) {
        this.#files.delete(file);
        continue;
      }
      const keys: string[] = [];
      const outcomes = new Map<string, Admitted>();
      const withProblems: { index: number; outcome: Admitted }[] = [];
      let invalidObjects = 0;
      for (const [index, one] of written.entries()) {
        const key = keyOf(one.object);
        keys.push(key);
        const { outcome, same } = this.#admitWritten(key, file, one, previousEffective);
        // A pause after each object validated, and every 64 taken as they were (a pause per object costs more
        // than taking one).
        if (!same || (++walked & 63) === 0) yield;
        this.#admitted.set(key, outcome);
        seen.add(key);
        outcomes.set(key, outcome);
        if (outcome.problems.length > 0) withProblems.push({ index, outcome });
        if (outcome.invalid) invalidObjects++;
      }
      this.#files.set(file, { written, keys, outcomes, withProblems, invalidObjects });
    }
    const set: AnyResource[] = [];
    const removed: AnyResource[] = [];
    for (const [key, outcome] of left) {
      // Written nowhere any more (not admitted again by this or another file): forgotten.
      if (seen.has(key) || this.#admitted.get(key) !== outcome) continue;
      this.#admitted.delete(key);
      this.#tracked.delete(key);
      this.#lastValid.delete(key);
    }
    for (const [key, was] of previousEffective) {
      const now = seen.has(key) ? this.#admitted.get(key)?.effective : undefined;
      if (now !== undefined && now !== was) set.push(now);
      else if (now === undefined && was !== undefined) removed.push(was);
    }
    return { set, removed };
  }

  /** What `one` gives: the outcome it had when written as before (`same`), else admitted anew. */
  #admitWritten(
    key: string,
    file: string,
    one: WrittenObject,
    previousEffective: Map<string, AnyResource | undefined>,
  ): { readonly outcome: Admitted; readonly same: boolean } {
    const before = this.#admitted.get(key);
    if (!previousEffective.has(key)) previousEffective.set(key, before?.effective);
    const same =
      before !== undefined &&
      before.file === file &&
      (before.written === one.object || (one.source !== undefined && before.source === one.source));
    return same ? { outcome: before, same } : { outcome: this.#admitOne(key, file, one), same };
  }

  /**
   * The positions of a file whose written objects are not the very ones of last time, when only those need
   * admitting: as many as before, every other one still the one in effect under its key, and no key written
   * twice. Undefined: admit the whole file.
   */
  #changedPositions(old: FileAdmission, written: readonly WrittenObject[]): number[] | undefined {
    if (written.length !== old.written.length || old.outcomes.size !== old.keys.length) return undefined;
    const changed: number[] = [];
    const changedKeys = new Set<string>();
    for (let index = 0; index < written.length; index++) {
      const key = old.keys[index] as string;
      if (written[index] !== old.written[index]) {
        changed.push(index);
        changedKeys.add(key);
      } else if (this.#admitted.get(key) !== old.outcomes.get(key)) return undefined;
    }
    const newKeys = new Set<string>();
    for (const index of changed) {
      const key = keyOf((written[index] as WrittenObject).object);
      if (newKeys.has(key) || (old.outcomes.has(key) && !changedKeys.has(key))) return undefined;
      newKeys.add(key);
    }
    return changed;
  }

  /**
   * A file's objects admitted at the changed positions only (#changedPositions): an edit of one document of a
   * file of 1,000 admits that one. Returns how many objects it walked.
   */
  *#admitChanged(
    file: string,
    old: FileAdmission,
    written: readonly WrittenObject[],
    changedAt: readonly number[],
    previousEffective: Map<string, AnyResource | undefined>,
    left: [string, Admitted][],
    seen: Set<string>,
  ): Steps<number> {
    const keys = [...old.keys];
    const replaced = new Map<number, Admitted>();
    for (const index of changedAt) {
      const key = old.keys[index] as string;
      const outcome = old.outcomes.get(key) as Admitted;
      if (!previousEffective.has(key)) previousEffective.set(key, outcome.effective);
      left.push([key, outcome]);
    }
    let walked = 0;
    for (const index of changedAt) {
      const one = written[index] as WrittenObject;
      const key = keyOf(one.object);
      const { outcome, same } = this.#admitWritten(key, file, one, previousEffective);
      if (!same || (++walked & 63) === 0) yield;
      this.#admitted.set(key, outcome);
      seen.add(key);
      keys[index] = key;
      replaced.set(index, outcome);
    }
    const outcomes = new Map<string, Admitted>();
    const withProblems: { index: number; outcome: Admitted }[] = [];
    let invalidObjects = 0;
    for (const [index, key] of keys.entries()) {
      const outcome = replaced.get(index) ?? (old.outcomes.get(key) as Admitted);
      outcomes.set(key, outcome);
      if (outcome.problems.length > 0) withProblems.push({ index, outcome });
      if (outcome.invalid) invalidObjects++;
    }
    this.#files.set(file, { written, keys, outcomes, withProblems, invalidObjects });
    return walked;
  }

  /** The problems of these files' objects, in this order, and how many objects they refuse. */
  invalidIn(files: Iterable<string>): Pick<Admission, 'invalid' | 'invalidObjects'> {
    const invalid: ManifestProblem[] = [];
    let invalidObjects = 0;
    for (const file of files) {
      const admitted = this.#files.get(file);
      if (admitted === undefined) continue;
      for (const { index, outcome } of admitted.withProblems) {
        const first = (admitted.written[index] as WrittenObject).line ?? 1;
        for (const p of outcome.problems)
          invalid.push(
            p.warning
              ? { file, line: first + p.from, message: p.message, warning: true }
              : { file, line: first + p.from, message: p.message },
          );
      }
      invalidObjects += admitted.invalidObjects;
    }
    return { invalid, invalidObjects };
  }

  #admitOne(key: string, file: string, written: WrittenObject): Admitted {
    const problems: PlacedProblem[] = [];
    const checked = this.#validate(key, written, problems);
    const effective = checked === 'invalid' ? this.#lastValid.get(key) : checked;
    if (effective === undefined) this.#tracked.delete(key);
    return {
      file,
      written: written.object,
      source: written.source,
      effective: effective && this.#track(key, effective),
      invalid: checked === 'invalid',
      problems,
    };
  }

  #validate(key: string, written: WrittenObject, invalid: PlacedProblem[]): AnyResource | 'invalid' {
    const { object } = written;
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
        unknownFields: [],
        warnings: [],
      };
    }
    const first = written.line ?? 1;
    const lineOf = (path: string) => (path && written.locate ? written.locate(path) : first);
    const fieldProblems: { line: number; text: string }[] = [
      ...(written.duplicates ?? []).map((d) => ({
        line: d.line,
        text: `${d.path}: duplicate field "${last(d.path)}"`,
      })),
      ...result.unknownFields.map((path) => ({
        line: lineOf(path),
        text: `${path}: unknown field "${last(path)}"`,
      })),
    ];
    // kube-apiserver adds a `<nil>` error saying rules were skipped because of the errors above: not a problem
    // of its own, and it names no field.
    const errors = result.errors.filter((e) => e.field !== '<nil>');
    const strict = this.#fieldValidation === 'Strict';
    const name = `${object.kind} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ''}${object.metadata.name}`;
    if (errors.length === 0 && (fieldProblems.length === 0 || !strict)) {
      for (const p of capped(fieldProblems.sort(byLine))) {
        invalid.push({
          from: p.line - first,
          message: `warning: ${name}: ${p.text} (dropped: --validation=warn)`,
          warning: true,
        });
      }
      const valid = result.object as unknown as AnyResource;
      this.#lastValid.set(key, valid);
      return valid;
    }
    const kept = previous ? 'the last valid version stays in effect' : 'not loaded';
    const problems = [
      // Under warn they would only have been dropped; listed all the same, so one edit fixes everything.
      ...(strict ? fieldProblems : fieldProblems.map((p) => ({ ...p, text: `${p.text} (warning)` }))),
      ...errors.map((e) => ({ line: lineOf(e.field), text: `${e.field ? `${e.field}: ` : ''}${e.message}` })),
    ];
    for (const p of capped(problems.sort(byLine)))
      invalid.push({ from: p.line - first, message: `${name} (${kept}): ${p.text}` });
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

function last(path: string): string {
  const parts = pathSegmentsOf(path);
  return parts[parts.length - 1] ?? path;
}

const byLine = (a: { line: number }, b: { line: number }) => a.line - b.line;

/** Problems listed per object: an object with thousands of unknown fields must not flood /config_dump and the log. */
const MAX_PROBLEMS_PER_OBJECT = 20;

function capped(problems: { line: number; text: string }[]): { line: number; text: string }[] {
  if (problems.length <= MAX_PROBLEMS_PER_OBJECT) return problems;
  const more = problems.length - MAX_PROBLEMS_PER_OBJECT;
  const next = problems[MAX_PROBLEMS_PER_OBJECT] as { line: number };
  return [
    ...problems.slice(0, MAX_PROBLEMS_PER_OBJECT),
    { line: next.line, text: `... and ${more} more problems` },
  ];
}

function keyOf(object: AnyResource): string {
  return `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}
