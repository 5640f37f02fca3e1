import { type FSWatcher, watch } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { relative } from 'node:path';
import type { Logger } from 'pino';
import { type Gauge, Registry } from 'prom-client';
import { runInSlices } from '../../ir/steps.ts';
import { invalidObjectsGauge, MANIFEST_PROBLEMS } from '../../metrics/source-metrics.ts';
import { BadInputReporter } from '../../net/bad-input.ts';
import type { DecodeOptions } from '../../snapshot/decode.ts';
import type { AnyResource } from '../../snapshot/resources.ts';
import { Snapshot } from '../../snapshot/snapshot.ts';
import { type Source, SourceError } from '../../snapshot/source.ts';
import type { CrdValidator } from '../../validation/index.ts';
import { defaultFileValidator } from './file-validation.ts';
import { parseDocumentsInSteps } from './manifest-documents.ts';
import { fsReason, listManifestFiles, readBounded } from './manifest-folder.ts';
import type {
  FieldLocation,
  ManifestEntry,
  ManifestProblem,
  OtherDocument,
  ParsedManifest,
} from './manifest-parser.ts';
import { type FieldValidation, ObjectStore } from './object-store.ts';

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
  /** API groups whose ServiceImports are read (--service-import-kinds); default: decode.ts's list. */
  readonly serviceImportGroups?: readonly string[];
  /** Unknown and repeated fields refuse the object (`Strict`, the default) or are dropped with a warning. */
  readonly fieldValidation?: FieldValidation;
  /**
   * A reload parses and admits in slices of this many milliseconds with the event loop free between them
   * (default 5, as translation; 0: in one go), so that a folder of 10,000 routes does not hold up requests.
   */
  readonly sliceMs?: number;
}

interface ParsedFile {
  readonly text: string;
  readonly parsed: ParsedManifest;
  readonly documents: ReadonlyMap<string, ParsedManifest>;
}

export const DEFAULT_MAX_MANIFEST_BYTES = 1_048_576;
export const DEFAULT_MAX_MANIFEST_OBJECTS = 10_000;

/**
 * Reads a folder of Kubernetes YAML (what `kubectl apply -f DIR` takes) and watches it. Every change
 * re-reads the folder and emits a whole new Snapshot. A file that does not parse keeps the objects it
 * had at its last good version, so a typo never takes routes down.
 */
export class FileSource implements Source {
  readonly name = 'file';
  readonly #dir: string;
  readonly #logger: Logger;
  readonly #debounceMs: number;
  readonly #maxFileBytes: number;
  readonly #maxObjects: number;
  readonly #problemCounter: BadInputReporter;
  readonly #store: ObjectStore;
  readonly #invalidGauge: Gauge | undefined;
  readonly #decode: DecodeOptions;
  readonly #validator: CrdValidator | undefined;
  readonly #lastGood = new Map<string, readonly ManifestEntry[]>();
  /**
   * Each file's text at the last reload, what it parsed to and its documents by text (manifest-documents.ts):
   * an unchanged file is not parsed again, a changed one only in the documents that changed.
   */
  #parsed = new Map<string, ParsedFile>();
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
    this.#maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_MANIFEST_BYTES;
    this.#maxObjects = options.maxObjects ?? DEFAULT_MAX_MANIFEST_OBJECTS;
    this.#problemCounter = new BadInputReporter(
      options.registry ?? new Registry(),
      this.#logger,
      MANIFEST_PROBLEMS,
    );
    const validator =
      options.validator === false ? undefined : (options.validator ?? defaultFileValidator(this.#logger));
    this.#validator = validator;
    this.#store = new ObjectStore(undefined, validator, options.fieldValidation ?? 'Strict');
    this.#invalidGauge = options.registry ? invalidObjectsGauge(options.registry) : undefined;
    this.#decode =
      options.serviceImportGroups !== undefined ? { serviceImportGroups: options.serviceImportGroups } : {};
  }

  /** Problems found in the last reload (syntax errors, invalid objects), each naming file and line. */
  get problems(): readonly ManifestProblem[] {
    return this.#problems;
  }

  async start(onSnapshot: (snapshot: Snapshot) => void): Promise<void> {
    await checkManifestsDir(this.#dir);
    await this.#reload(onSnapshot);
    // Top level only, as `kubectl apply -f DIR` without -R; Node 20's recursive watch on Linux misses renames.
    this.#watcher = watch(this.#dir, () => this.#schedule(onSnapshot));
    this.#watcher.on('error', (error) =>
      this.#logger.error({ err: error }, 'watching the manifests folder failed'),
    );
  }

  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#watcher?.close();
    await this.#reloading;
  }

  /** A file's text parsed: what it parsed to last time when the text is the same, else its changed documents. */
  async #parse(file: string, text: string, parsedNow: Map<string, ParsedFile>): Promise<ParsedManifest> {
    const last = this.#parsed.get(file);
    if (last !== undefined && last.text === text) {
      parsedNow.set(file, last);
      return last.parsed;
    }
    const { parsed, documents } = await runInSlices(
      parseDocumentsInSteps(file, text, this.#decode, last?.documents),
      this.#sliceMs,
    );
    // Kept without the entries' syntax trees (many times the objects' size); other documents keep theirs (rare).
    parsedNow.set(file, {
      text,
      parsed: { ...parsed, entries: parsed.entries.map(withoutSyntaxTree) },
      documents,
    });
    return parsed;
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
    let files: string[];
    try {
      files = await listManifestFiles(this.#dir);
    } catch (error) {
      // The folder went away or became unreadable while watched: what was read last stays in effect.
      const reason = `${fsReason(error)}; the last configuration read from it stays in effect`;
      this.#reportProblems([{ file: this.#dir, line: 0, message: reason }]);
      return;
    }
    const problems: ManifestProblem[] = [];
    const current = new Map<string, readonly ManifestEntry[]>();
    const parsedNow = new Map<string, ParsedFile>();
    const owners = new Map<string, string>();
    let total = 0;
    let refused = 0;
    for (const path of files) {
      const file = relative(this.#dir, path);
      const read = await readBounded(path, this.#maxFileBytes);
      // Removed between listing and reading: the next event reloads again.
      if (read === undefined) continue;
      if (typeof read === 'object') {
        const state = this.#lastGood.has(file) ? 'its last readable version stays in effect' : 'not loaded';
        problems.push({ file, line: 0, message: `cannot be read (${read.unreadable}); ${state}` });
        current.set(file, this.#lastGood.get(file) ?? []);
        continue;
      }
      if (typeof read === 'number') {
        problems.push({
          file,
          line: 1,
          message: `file is ${read} bytes, over the ${this.#maxFileBytes}-byte limit (--max-manifest-bytes); refused unread`,
        });
        current.set(file, this.#lastGood.get(file) ?? []);
        continue;
      }
      const parsed = await this.#parse(file, read, parsedNow);
      problems.push(...parsed.syntaxErrors, ...parsed.invalidObjects);
      if (parsed.syntaxErrors.length > 0) {
        current.set(file, this.#lastGood.get(file) ?? []);
        continue;
      }
      const refusedHere = this.#keptForRefused(file, parsed.entries, parsed.others, problems);
      refused += refusedHere.refused;
      const entries = [...parsed.entries, ...refusedHere.kept];
      if (total + entries.length > this.#maxObjects) {
        problems.push({
          file,
          line: 1,
          message: `${entries.length} objects would pass the ${this.#maxObjects}-object limit (--max-manifest-objects); file refused`,
        });
        continue;
      }
      total += entries.length;
      current.set(file, withoutDuplicates(file, entries, owners, problems));
    }
    this.#parsed = parsedNow;
    const admission = await runInSlices(this.#store.admitFilesInSteps(current), this.#sliceMs);
    this.#lastGood.clear();
    // Kept without their locators: those hold the file's YAML syntax tree, many times the objects' size.
    for (const [file, entries] of current) this.#lastGood.set(file, entries.map(withoutSyntaxTree));
    this.#invalidGauge?.set(admission.invalidObjects + refused);
    this.#reportProblems([...problems, ...admission.invalid]);
    onSnapshot(new Snapshot(admission.objects));
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

  #reportProblems(problems: readonly ManifestProblem[]): void {
    const before = new Set(this.#problems.map(formatProblem));
    for (const problem of problems) {
      if (!before.has(formatProblem(problem))) {
        this.#problemCounter.count('manifest');
        const fields = { file: problem.file, line: problem.line };
        if (problem.warning) this.#logger.warn(fields, `manifest warning: ${formatProblem(problem)}`);
        else this.#logger.error(fields, `manifest problem: ${formatProblem(problem)}`);
      }
    }
    if (problems.length === 0 && this.#problems.length > 0) this.#logger.info('manifest problems resolved');
    this.#problems = problems;
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

export function formatProblem(problem: ManifestProblem): string {
  return problem.line > 0
    ? `${problem.file}:${problem.line}: ${problem.message}`
    : `${problem.file}: ${problem.message}`;
}

/**
 * The first object of a kind/namespace/name (by file name, then position) is kept; later ones are listed as
 * problems naming where the kept one is, instead of one silently replacing the other.
 */
function withoutDuplicates(
  file: string,
  entries: readonly ManifestEntry[],
  owners: Map<string, string>,
  problems: ManifestProblem[],
): ManifestEntry[] {
  const kept: ManifestEntry[] = [];
  for (const entry of entries) {
    const meta = entry.object.metadata;
    const key = `${entry.object.kind} ${meta.namespace ? `${meta.namespace}/` : ''}${meta.name}`;
    const owner = owners.get(key);
    if (owner !== undefined) {
      problems.push({
        file,
        line: entry.line,
        message: `duplicate ${key}: ${owner} has it already; this one is ignored`,
      });
      continue;
    }
    owners.set(key, `${file}:${entry.line}`);
    kept.push(entry);
  }
  return kept;
}

function withoutSyntaxTree(entry: ManifestEntry): ManifestEntry {
  const duplicates = entry.duplicates.length > 0 ? entry.duplicates : NO_DUPLICATES;
  return entry.source === undefined
    ? { object: entry.object, line: entry.line, duplicates }
    : { object: entry.object, line: entry.line, duplicates, source: entry.source };
}

const NO_DUPLICATES: readonly FieldLocation[] = [];

function objectKey(object: AnyResource): string {
  return `${object.kind} ${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}
