import { type FSWatcher, watch } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Logger } from 'pino';
import type { AnyResource } from '../../snapshot/resources.ts';
import { Snapshot } from '../../snapshot/snapshot.ts';
import type { DecodeOptions } from '../decode.ts';
import { type Source, SourceError } from '../source.ts';
import { type ManifestProblem, parseManifest } from './manifest-parser.ts';
import { ObjectStore } from './object-store.ts';

export interface FileSourceOptions {
  readonly dir: string;
  readonly logger: Logger;
  /** Quiet time after the last file event before the folder is read again. */
  readonly debounceMs?: number;
  /** API groups whose ServiceImports are read (--service-import-kinds); default: decode.ts's list. */
  readonly serviceImportGroups?: readonly string[];
}

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

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
  readonly #decode: DecodeOptions;
  readonly #store = new ObjectStore();
  readonly #lastGood = new Map<string, readonly AnyResource[]>();
  #problems: readonly ManifestProblem[] = [];
  #watcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #reloading: Promise<void> = Promise.resolve();

  constructor(options: FileSourceOptions) {
    this.#dir = options.dir;
    this.#logger = options.logger.child({ component: 'file-source', dir: options.dir });
    this.#debounceMs = options.debounceMs ?? 50;
    this.#decode =
      options.serviceImportGroups !== undefined ? { serviceImportGroups: options.serviceImportGroups } : {};
  }

  /** Problems found in the last reload (syntax errors, invalid objects), each naming file and line. */
  get problems(): readonly ManifestProblem[] {
    return this.#problems;
  }

  async start(onSnapshot: (snapshot: Snapshot) => void): Promise<void> {
    try {
      await readdir(this.#dir);
    } catch (cause) {
      throw new SourceError('ManifestDirUnreadable', `cannot read manifests folder ${this.#dir}`, { cause });
    }
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

  #schedule(onSnapshot: (snapshot: Snapshot) => void): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#reloading = this.#reloading.then(() => this.#reload(onSnapshot));
    }, this.#debounceMs);
  }

  async #reload(onSnapshot: (snapshot: Snapshot) => void): Promise<void> {
    const files = await listManifestFiles(this.#dir);
    const problems: ManifestProblem[] = [];
    const current = new Map<string, readonly AnyResource[]>();
    for (const path of files) {
      const file = relative(this.#dir, path);
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        // Removed between listing and reading: the next event reloads again.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      const parsed = parseManifest(file, text, this.#decode);
      problems.push(...parsed.syntaxErrors, ...parsed.invalidObjects);
      if (parsed.syntaxErrors.length > 0) {
        current.set(file, this.#lastGood.get(file) ?? []);
      } else {
        current.set(file, parsed.objects);
      }
    }
    this.#lastGood.clear();
    for (const [file, objects] of current) this.#lastGood.set(file, objects);
    this.#reportProblems(problems);

    const objects = [...current.values()].flat();
    onSnapshot(new Snapshot(this.#store.admit(objects)));
  }

  #reportProblems(problems: readonly ManifestProblem[]): void {
    const before = new Set(this.#problems.map(formatProblem));
    for (const problem of problems) {
      if (!before.has(formatProblem(problem))) {
        this.#logger.error(
          { file: problem.file, line: problem.line },
          `manifest problem: ${formatProblem(problem)}`,
        );
      }
    }
    if (problems.length === 0 && this.#problems.length > 0) this.#logger.info('manifest problems resolved');
    this.#problems = problems;
  }
}

export function formatProblem(problem: ManifestProblem): string {
  return `${problem.file}:${problem.line}: ${problem.message}`;
}

async function listManifestFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && MANIFEST_FILE.test(entry.name) && !entry.name.startsWith('.'))
    .map((entry) => join(dir, entry.name))
    .sort();
}
