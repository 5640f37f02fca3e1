import { type FSWatcher, watch } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { relative } from 'node:path';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { runInSlices } from '../../ir/steps.ts';
import type { DecodeOptions } from '../../snapshot/decode.ts';
import type { AnyResource } from '../../snapshot/resources.ts';
import { Snapshot } from '../../snapshot/snapshot.ts';
import { type Source, SourceError } from '../../snapshot/source.ts';
import type { CrdValidator } from '../../validation/index.ts';
import { DuplicateIndex } from './duplicate-index.ts';
import { defaultFileValidator } from './file-validation.ts';
import { keptEntryOf, parseDocumentsInSteps } from './manifest-documents.ts';
import {
  type FileStamp,
  fileStamp,
  fsReason,
  listManifestFiles,
  readBounded,
  sameStamp,
} from './manifest-folder.ts';
import type {
  FieldLocation,
  ManifestEntry,
  ManifestProblem,
  OtherDocument,
  ParsedManifest,
} from './manifest-parser.ts';
import { ManifestProblemLog, type ManifestProblemSink } from './manifest-problem-log.ts';
import { type FieldValidation, ObjectStore, type WrittenObject } from './object-store.ts';

export { formatProblem } from './manifest-problem-log.ts';

export interface FileSourceOptions {
  readonly dir: string;
  readonly logger: Logger;
  /** Quiet time after the last file event before the folder is read again. */
  readonly debounceMs?: number;
  /** A file larger than this is refused unread (`--max-manifest-bytes`). Default 1 MiB. */
  readonly maxFileBytes?: number;
  /** Objects across the folder; files past the cap are refused (`--max-manifest-objects`). Default 10,000. */
  readonly maxObjects?: number;
  /** CRD validation of every object (issue 12); deploy/crds by default, `false` for none. */
  readonly validator?: CrdValidator | false;
  /** Where clusterset_gateway_manifest_problems_total and clusterset_gateway_invalid_objects are registered. */
  readonly registry?: Registry;
  /**
   * Where each reload's problems go; default: logged and counted here (ManifestProblemLog with `logger` and
   * `registry`). The file source thread sends them to the thread that serves, which logs and counts them.
   */
  readonly problemSink?: ManifestProblemSink;
  /** API groups whose ServiceImports are read (--service-import-kinds); default: decode.ts's list. */
  readonly serviceImportGroups?: readonly string[];
  /** Unknown and repeated fields refuse the object (`Strict`, the default) or are dropped with a warning. */
  readonly fieldValidation?: FieldValidation;
  /**
   * A reload parses and admits in slices of this many milliseconds with the event loop free between them
   * (default 5, as translation; 0: in one go), so that a folder of 10,000 routes does not hold up requests.
   */
  readonly sliceMs?: number;
  /** How a file is read (readBounded; a test counts the reads). */
  readonly readFile?: typeof readBounded;
}

interface ParsedFile {
  readonly text: string;
  readonly parsed: ParsedManifest;
  readonly documents: ReadonlyMap<string, ParsedManifest>;
}

/** What one file gave at its last reading, kept while its stamp stays the same. */
interface FileState {
  /** The file as stat saw it before it was read; undefined when it could not be read (read again every time). */
  readonly stamp: FileStamp | undefined;
  readonly parsed: ParsedFile | undefined;
  /** The objects it offers (before the cross-file duplicate check), without their syntax trees. */
  readonly entries: readonly ManifestEntry[];
  readonly problems: readonly ManifestProblem[];
  /** Documents refused before validation. */
  readonly refused: number;
  /** Whether its objects count against --max-manifest-objects (not when they are its last good version). */
  readonly counted: boolean;
}

export const DEFAULT_MAX_MANIFEST_BYTES = 1_048_576;
export const DEFAULT_MAX_MANIFEST_OBJECTS = 10_000;

/**
 * Reads a folder of Kubernetes YAML (what `kubectl apply -f DIR` takes) and watches it. Every change emits a
 * whole new Snapshot, made from the last one by what changed: a file whose stamp (size, times, inode) is the same
 * and that no watch event named is not read again, and only the objects of changed files are admitted and
 * indexed again. A file that does not parse keeps the objects it had at its last good version, so a typo never
 * takes routes down.
 */
export class FileSource implements Source {
  readonly name = 'file';
  readonly #dir: string;
  readonly #logger: Logger;
  readonly #debounceMs: number;
  readonly #maxFileBytes: number;
  readonly #maxObjects: number;
  readonly #problemSink: ManifestProblemSink;
  readonly #store: ObjectStore;
  readonly #decode: DecodeOptions;
  readonly #validator: CrdValidator | undefined;
  readonly #lastGood = new Map<string, readonly ManifestEntry[]>();
  /**
   * Each file's state at the last reload: its stamp, its text and what it parsed to, its documents by text
   * (manifest-documents.ts): an unchanged file is not read again, a changed one parsed only in the documents that
   * changed.
   */
  #files = new Map<string, FileState>();
  readonly #duplicates = new DuplicateIndex();
  /** Each file's kept entries as last given to the object store. */
  readonly #admitted = new Map<string, readonly ManifestEntry[]>();
  /** Files a watch event named since the last reload began (null: an event without a name, read them all). */
  #named: Set<string> | null = new Set();
  #snapshot: Snapshot = Snapshot.empty;
  readonly #readFile: typeof readBounded;
  readonly #sliceMs: number;
  #problems: readonly ManifestProblem[] = [];
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #reloading: Promise<void> = Promise.resolve();

  constructor(options: FileSourceOptions) {
    this.#dir = options.dir;
    this.#logger = options.logger.child({ component: 'file-source', dir: options.dir });
    this.#debounceMs = options.debounceMs ?? 50;
    this.#sliceMs = options.sliceMs ?? 5;
    this.#readFile = options.readFile ?? readBounded;
    this.#maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_MANIFEST_BYTES;
    this.#maxObjects = options.maxObjects ?? DEFAULT_MAX_MANIFEST_OBJECTS;
    this.#problemSink = options.problemSink ?? new ManifestProblemLog(this.#logger, options.registry);
    const validator =
      options.validator === false ? undefined : (options.validator ?? defaultFileValidator(this.#logger));
    this.#validator = validator;
    this.#store = new ObjectStore(undefined, validator, options.fieldValidation ?? 'Strict');
    this.#decode =
      options.serviceImportGroups !== undefined ? { serviceImportGroups: options.serviceImportGroups } : {};
  }

  /** Problems found in the last reload (syntax errors, invalid objects), each naming file and line. */
  get problems(): readonly ManifestProblem[] {
    return this.#problems;
  }

  async start(onSnapshot: (snapshot: Snapshot) => void): Promise<void> {
    await checkManifestsDir(this.#dir);
    // Watching before the first reading: a write during it is named by an event and read at the next reload.
    // Top level only, as `kubectl apply -f DIR` without -R; Node 20's recursive watch on Linux misses renames.
    this.#watcher = watch(this.#dir, (_event, name) => {
      if (name === null) this.#named = null;
      else this.#named?.add(name);
      this.#schedule(onSnapshot);
    });
    this.#watcher.on('error', (error) =>
      this.#logger.error({ err: error }, 'watching the manifests folder failed'),
    );
    const first = this.#reload(onSnapshot);
    this.#reloading = first.catch(() => undefined);
    await first;
  }

  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#watcher?.close();
    await this.#reloading;
  }

  /** A file's text parsed, only in the documents that changed since `last`. */
  async #parse(
    file: string,
    text: string,
    last: ParsedFile | undefined,
  ): Promise<{ readonly parsed: ParsedManifest; readonly kept: ParsedFile }> {
    const { parsed, documents } = await runInSlices(
      parseDocumentsInSteps(file, text, this.#decode, last?.documents),
      this.#sliceMs,
    );
    // Kept without the entries' syntax trees (many times the objects' size); other documents keep theirs (rare).
    return {
      parsed,
      kept: { text, parsed: { ...parsed, entries: parsed.entries.map(withoutSyntaxTree) }, documents },
    };
  }

  #schedule(onSnapshot: (snapshot: Snapshot) => void): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      // A reload that fails keeps the configuration in force; the chain stays alive for the next event.
      this.#reloading = this.#reloading
        .then(() => this.#reload(onSnapshot))
        .catch((error: unknown) =>
          this.#logger.error(
            { err: error },
            'reloading the manifests folder failed; the last configuration stays',
          ),
        );
    }, this.#debounceMs);
  }

  async #reload(onSnapshot: (snapshot: Snapshot) => void): Promise<void> {
    const named = this.#named;
    this.#named = new Set();
    let files: string[];
    try {
      files = await listManifestFiles(this.#dir);
    } catch (error) {
      // The folder went away or became unreadable while watched: what was read last stays in effect.
      const reason = `${fsReason(error)}; the last configuration read from it stays in effect`;
      this.#reportProblems([{ file: this.#dir, line: 0, message: reason }], undefined);
      return;
    }
    const states = new Map<string, FileState>();
    // Objects parsed in this reload, with their locators (lines of fields) for the object store's problems.
    const fresh = new Map<AnyResource, ManifestEntry>();
    for (const path of files) {
      const file = relative(this.#dir, path);
      const state = await this.#fileState(file, path, named === null || named.has(file), fresh);
      // Removed between listing and reading: the next event reloads again.
      if (state !== undefined) states.set(file, state);
    }
    this.#files = states;
    const included = new Map<string, readonly ManifestEntry[]>();
    const refusedFiles = new Map<string, ManifestProblem>();
    let total = 0;
    let refused = 0;
    for (const [file, state] of states) {
      refused += state.refused;
      if (state.counted && total + state.entries.length > this.#maxObjects) {
        refusedFiles.set(file, {
          file,
          line: 1,
          message: `${state.entries.length} objects would pass the ${this.#maxObjects}-object limit (--max-manifest-objects); file refused`,
        });
        continue;
      }
      if (state.counted) total += state.entries.length;
      included.set(file, state.entries);
    }
    const gone = (files: Iterable<string>) => [...files].filter((file) => !included.has(file));
    await runInSlices(
      this.#duplicates.updateInSteps(
        new Map([...included, ...gone(this.#admitted.keys()).map((file) => [file, undefined] as const)]),
      ),
      this.#sliceMs,
    );
    const toAdmit = new Map<string, readonly WrittenObject[] | undefined>();
    for (const file of included.keys()) {
      const kept = this.#duplicates.kept(file);
      if (this.#admitted.get(file) === kept) continue;
      toAdmit.set(file, fresh.size === 0 ? kept : kept.map((entry) => fresh.get(entry.object) ?? entry));
      this.#admitted.set(file, kept);
    }
    for (const file of gone(this.#admitted.keys())) {
      toAdmit.set(file, undefined);
      this.#admitted.delete(file);
    }
    const changes = await runInSlices(this.#store.updateFilesInSteps(toAdmit), this.#sliceMs);
    for (const file of gone(this.#lastGood.keys())) this.#lastGood.delete(file);
    for (const file of included.keys()) this.#lastGood.set(file, this.#duplicates.kept(file));
    const problems: ManifestProblem[] = [];
    for (const [file, state] of states) {
      problems.push(...state.problems);
      const refusedFile = refusedFiles.get(file);
      if (refusedFile !== undefined) problems.push(refusedFile);
      else problems.push(...this.#duplicates.problems(file));
    }
    const admission = this.#store.invalidIn(included.keys());
    this.#reportProblems([...problems, ...admission.invalid], admission.invalidObjects + refused);
    this.#snapshot = Snapshot.withChanges(this.#snapshot, changes.set, changes.removed);
    onSnapshot(this.#snapshot);
  }

  /**
   * What a file gives now: its last state when its stamp is the same and no event named it (not read), or when
   * its text is the same (not parsed); else it is parsed in the documents that changed.
   */
  async #fileState(
    file: string,
    path: string,
    named: boolean,
    fresh: Map<AnyResource, ManifestEntry>,
  ): Promise<FileState | undefined> {
    const previous = this.#files.get(file);
    const stamp = await fileStamp(path);
    if (stamp === 'gone') return undefined;
    if (!named && previous?.stamp !== undefined && stamp !== undefined && sameStamp(previous.stamp, stamp))
      return previous;
    const read = await this.#readFile(path, this.#maxFileBytes);
    if (read === undefined) return undefined;
    const lastGood = this.#lastGood.get(file) ?? [];
    if (typeof read === 'object') {
      const state = this.#lastGood.has(file) ? 'its last readable version stays in effect' : 'not loaded';
      const problem = { file, line: 0, message: `cannot be read (${read.unreadable}); ${state}` };
      return {
        stamp: undefined,
        parsed: undefined,
        entries: lastGood,
        problems: [problem],
        refused: 0,
        counted: false,
      };
    }
    if (typeof read === 'number') {
      const problem = {
        file,
        line: 1,
        message: `file is ${read} bytes, over the ${this.#maxFileBytes}-byte limit (--max-manifest-bytes); refused unread`,
      };
      return { stamp, parsed: undefined, entries: lastGood, problems: [problem], refused: 0, counted: false };
    }
    if (previous?.parsed !== undefined && previous.parsed.text === read) return { ...previous, stamp };
    const { parsed, kept } = await this.#parse(file, read, previous?.parsed);
    const problems: ManifestProblem[] = [...parsed.syntaxErrors, ...parsed.invalidObjects];
    if (parsed.syntaxErrors.length > 0)
      return { stamp, parsed: kept, entries: lastGood, problems, refused: 0, counted: false };
    for (const entry of parsed.entries) if (entry.locate !== undefined) fresh.set(entry.object, entry);
    const refusedHere = this.#keptForRefused(file, kept.parsed.entries, parsed.others, problems);
    const entries = [...kept.parsed.entries, ...refusedHere.kept];
    return { stamp, parsed: kept, entries, problems, refused: refusedHere.refused, counted: true };
  }

  /**
   * Documents refused before validation (a kind, group or version the API server would not find, a bad
   * envelope) cost only themselves: their problem is listed, and the object of the same name this file had at its
   * last good version stays in effect, as an object `kubectl apply` refuses stays as it was in the cluster.
   */
  #keptForRefused(
    file: string,
    entries: readonly ManifestEntry[],
    others: readonly OtherDocument[],
    problems: ManifestProblem[],
  ): { kept: ManifestEntry[]; refused: number } {
    const previous = this.#lastGood.get(file) ?? [];
    let refused = 0;
    const present = new Set(entries.map((e) => objectKey(e.object)));
    const kept: ManifestEntry[] = [];
    for (const doc of others) {
      const problem =
        doc.refused === undefined ? this.#validator?.kindProblem(doc.apiVersion, doc.kind) : undefined;
      if (doc.refused === undefined && problem === undefined) continue;
      refused++;
      const same = previous.filter(
        (e) =>
          e.object.metadata.name === doc.name &&
          (e.object.metadata.namespace ?? 'default') ===
            (doc.namespace ?? e.object.metadata.namespace ?? 'default') &&
          !present.has(objectKey(e.object)) &&
          !kept.includes(e),
      );
      kept.push(...same);
      if (problem === undefined) continue;
      const ns = doc.namespace ? `${doc.namespace}/` : '';
      const state = same.length > 0 ? 'the last valid version stays in effect' : 'not loaded';
      problems.push({
        file,
        line: doc.locate(problem.field),
        message: `${doc.kind} ${ns}${doc.name ?? '(no name)'} (${state}): ${problem.field}: ${problem.message}`,
      });
    }
    return { kept, refused };
  }

  #reportProblems(problems: readonly ManifestProblem[], invalidObjects: number | undefined): void {
    this.#problems = problems;
    this.#problemSink.report(problems, invalidObjects);
  }
}

/**
 * Fails with the path and the reason when `dir` is not a folder this process can list: run before any port is
 * opened, so that `--manifests /does-not-exist` is a start-up error, not a gateway serving nothing.
 */
export async function checkManifestsDir(dir: string): Promise<void> {
  try {
    await readdir(dir);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'no such folder'
        : code === 'ENOTDIR'
          ? 'not a folder'
          : code === 'EACCES' || code === 'EPERM'
            ? 'permission denied'
            : String((cause as Error).message ?? cause);
    throw new SourceError('ManifestDirUnreadable', `--manifests ${dir}: ${reason}`, { cause });
  }
}

/**
 * An entry as kept between reloads. One without a syntax tree is kept as it is: a document kept in its file gives
 * the same entry, whose line follows where the document is now (manifest-documents.ts); copying it would fix the
 * line and make it a new entry.
 */
function withoutSyntaxTree(entry: ManifestEntry): ManifestEntry {
  if (entry.locate === undefined) return entry;
  const kept = keptEntryOf(entry);
  if (kept !== undefined) return kept;
  const duplicates = entry.duplicates.length > 0 ? entry.duplicates : NO_DUPLICATES;
  return entry.source === undefined
    ? { object: entry.object, line: entry.line, duplicates }
    : { object: entry.object, line: entry.line, duplicates, source: entry.source };
}

const NO_DUPLICATES: readonly FieldLocation[] = [];

function objectKey(object: AnyResource): string {
  return `${object.kind} ${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}
