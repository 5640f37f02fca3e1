import { runAllSteps, type Steps } from '../../ir/steps.ts';
import type { ManifestEntry, ManifestProblem } from './manifest-parser.ts';

/**
 * The first object of a kind/namespace/name across the folder (by file name, then position in its file) is kept;
 * later ones are problems naming where the kept one is, instead of one silently replacing the other. Kept per
 * file and changed by file, so that an edit costs its file (and the few files that write a name it writes), not
 * the folder.
 */
export class DuplicateIndex {
  /** Who writes each name, in the order the folder is read. */
  readonly #writers = new Map<string, Writer[]>();
  readonly #files = new Map<string, IndexedFile>();

  /**
   * Sets the entries of the files that changed (undefined: the file is gone). A file given the very array it
   * was given last time is unchanged. Returns the files whose kept entries or problems may have changed.
   */
  update(changes: ReadonlyMap<string, readonly ManifestEntry[] | undefined>): Set<string> {
    return runAllSteps(this.updateInSteps(changes));
  }

  /** update() as steps (ir/steps.ts): a pause is possible every 64 entries. */
  *updateInSteps(changes: ReadonlyMap<string, readonly ManifestEntry[] | undefined>): Steps<Set<string>> {
    const affected = new Set<string>();
    const touched = new Set<string>();
    let walked = 0;
    for (const [file, entries] of changes) {
      const old = this.#files.get(file);
      if (old?.entries === entries) continue;
      touched.add(file);
      if (old !== undefined && entries !== undefined && entries.length === old.entries.length) {
        walked += yield* this.#replaceChanged(file, old, entries, affected);
        continue;
      }
      for (const name of old?.names ?? []) {
        if ((++walked & 63) === 0) yield;
        const writers = this.#writers.get(name)?.filter((w) => w.file !== file) ?? [];
        if (writers.length > 0) this.#writers.set(name, writers);
        else this.#writers.delete(name);
        affected.add(name);
      }
      if (entries === undefined) {
        this.#files.delete(file);
        continue;
      }
      const names = entries.map(nameOf);
      for (const [index, name] of names.entries()) {
        if ((++walked & 63) === 0) yield;
        const writer = { file, index, entry: entries[index] as ManifestEntry };
        const writers = this.#writers.get(name);
        if (writers === undefined) this.#writers.set(name, [writer]);
        else {
          writers.push(writer);
          writers.sort(byPlace);
        }
        affected.add(name);
      }
      this.#files.set(file, { entries, names, kept: entries, ignored: NO_IGNORED });
    }
    // A name written in several files: whether the others keep their object may have changed too.
    const recheck = new Set(touched);
    for (const name of affected) {
      const writers = this.#writers.get(name);
      if (writers !== undefined && (writers.length > 1 || !touched.has((writers[0] as Writer).file)))
        for (const writer of writers) recheck.add(writer.file);
    }
    for (const file of recheck) {
      yield;
      const indexed = this.#files.get(file);
      if (indexed !== undefined) this.#files.set(file, this.#checked(file, indexed));
    }
    return recheck;
  }

  /**
   * A file given as many entries as before, the same entry objects except some (an edit of its documents that
   * left every other document where it was, manifest-documents.ts): only the entries that are not the same
   * object are indexed again, so that an edit of one document of a file of 1,000 costs that document. Returns
   * how many entries it walked.
   */
  *#replaceChanged(
    file: string,
    old: IndexedFile,
    entries: readonly ManifestEntry[],
    affected: Set<string>,
  ): Steps<number> {
    const names = [...old.names];
    let walked = 0;
    for (let index = 0; index < entries.length; index++) {
      const entry = entries[index] as ManifestEntry;
      if (entry === old.entries[index]) continue;
      if ((++walked & 63) === 0) yield;
      const was = names[index] as string;
      const writers = this.#writers.get(was)?.filter((w) => w.file !== file || w.index !== index) ?? [];
      if (writers.length > 0) this.#writers.set(was, writers);
      else this.#writers.delete(was);
      affected.add(was);
      const name = nameOf(entry);
      names[index] = name;
      const writer = { file, index, entry };
      const now = this.#writers.get(name);
      if (now === undefined) this.#writers.set(name, [writer]);
      else {
        now.push(writer);
        now.sort(byPlace);
      }
      affected.add(name);
    }
    this.#files.set(file, { entries, names, kept: entries, ignored: NO_IGNORED });
    return walked;
  }

  /** The file's entries less the names an earlier place writes (the same array when none). */
  kept(file: string): readonly ManifestEntry[] {
    return this.#files.get(file)?.kept ?? NO_ENTRIES;
  }

  /**
   * The file's duplicates, each naming where the kept one is: lines read now from the entries, which follow their
   * documents (an edit that adds lines above one moves its problem without indexing it again).
   */
  problems(file: string): readonly ManifestProblem[] {
    const ignored = this.#files.get(file)?.ignored ?? NO_IGNORED;
    if (ignored.length === 0) return NO_PROBLEMS;
    return ignored.map(({ entry, name, first }) => ({
      file,
      line: entry.line,
      message: `duplicate ${name}: ${first.file}:${first.entry.line} has it already; this one is ignored`,
    }));
  }

  #checked(file: string, indexed: IndexedFile): IndexedFile {
    const ignored: Ignored[] = [];
    const kept: ManifestEntry[] = [];
    indexed.names.forEach((name, index) => {
      const entry = indexed.entries[index] as ManifestEntry;
      const first = (this.#writers.get(name) as Writer[])[0] as Writer;
      if (first.file === file && first.index === index) {
        kept.push(entry);
        return;
      }
      ignored.push({ entry, name, first });
    });
    return ignored.length === 0
      ? { ...indexed, kept: indexed.entries, ignored: NO_IGNORED }
      : { ...indexed, kept, ignored };
  }
}

interface Writer {
  readonly file: string;
  /** Position in its file. */
  readonly index: number;
  readonly entry: ManifestEntry;
}

/** An entry ignored because an earlier place writes its name. */
interface Ignored {
  readonly entry: ManifestEntry;
  readonly name: string;
  readonly first: Writer;
}

interface IndexedFile {
  readonly entries: readonly ManifestEntry[];
  /** Each entry's name, by the same index. */
  readonly names: readonly string[];
  readonly kept: readonly ManifestEntry[];
  readonly ignored: readonly Ignored[];
}

const NO_ENTRIES: readonly ManifestEntry[] = [];
const NO_PROBLEMS: readonly ManifestProblem[] = [];
const NO_IGNORED: readonly Ignored[] = [];

/** `HTTPRoute shop/web`, as problems name an object. */
function nameOf(entry: ManifestEntry): string {
  const meta = entry.object.metadata;
  return `${entry.object.kind} ${meta.namespace ? `${meta.namespace}/` : ''}${meta.name}`;
}

function byPlace(a: Writer, b: Writer): number {
  return a.file < b.file ? -1 : a.file > b.file ? 1 : a.index - b.index;
}
