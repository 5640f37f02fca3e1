import type { Steps } from '../../ir/steps.ts';
import type { DecodeOptions } from '../../snapshot/decode.ts';
import {
  capped,
  type FieldLocation,
  type ManifestEntry,
  type ParsedManifest,
  parseManifestInSteps,
} from './manifest-parser.ts';

/**
 * A file's YAML documents parsed one by one and kept by their text, so that editing one route of a file of
 * 1,000 parses one document again, not 1,000: the others are what they parsed to last time, the very same
 * objects (the object store then admits them without validating them again, and the translation thread is not
 * sent them). Documents are split at `---` lines, which YAML never lets a scalar or a collection span, and each
 * is parsed alone (anchors are per document); a file with directives (`%YAML`), end markers (`...`), content on
 * a `---` line, or JSON is parsed whole. Kept documents hold no syntax tree: an object of one that is refused
 * again (its file changed elsewhere) is named by its first line, not by field.
 */
export interface ParsedDocuments {
  readonly parsed: ParsedManifest;
  /** Each document's text to what it parsed to (lines counted from its own first line). */
  readonly documents: ReadonlyMap<string, ParsedManifest>;
}

const WHOLE_FILE_ONLY = /^(?:%|\.\.\.|---[ \t]*[^\s])/m;

export function* parseDocumentsInSteps(
  file: string,
  text: string,
  options: DecodeOptions,
  previous: ReadonlyMap<string, ParsedManifest> | undefined,
): Steps<ParsedDocuments> {
  const pieces = /\.json$/i.test(file) || WHOLE_FILE_ONLY.test(text) ? undefined : splitDocuments(text);
  if (pieces === undefined) {
    const parsed = yield* parseManifestInSteps(file, text, options);
    return { parsed, documents: new Map() };
  }
  const documents = new Map<string, ParsedManifest>();
  const shiftedParts: ParsedManifest[] = [];
  const taken = new Set<ParsedManifest>();
  let walked = 0;
  for (const piece of pieces) {
    // A pause is possible every 64 documents taken as they were (and after each parsed): 1,000 take a while too.
    if ((++walked & 63) === 0) yield;
    let parsed = previous?.get(piece.text) ?? documents.get(piece.text);
    if (parsed === undefined) {
      const fresh = yield* parseManifestInSteps(file, piece.text, options);
      parsed = { ...fresh, entries: fresh.entries.map(withoutLocate) };
      const part = shifted(fresh, piece.line - 1);
      shiftedParts.push(part);
      // Placed now, so that the entries kept from this parse are the ones the next edits keep.
      const placed = placedAt(parsed, piece.line, taken);
      part.entries.forEach((entry, index) => {
        keptAs.set(entry, placed.entries[index] as ManifestEntry);
      });
    } else {
      shiftedParts.push(placedAt(parsed, piece.line, taken));
    }
    documents.set(piece.text, parsed);
  }
  const syntaxErrors = capped(
    shiftedParts.flatMap((p) => p.syntaxErrors),
    file,
  );
  const failed = syntaxErrors.length > 0;
  const entries = failed ? [] : shiftedParts.flatMap((p) => p.entries);
  return {
    parsed: {
      objects: entries.map((e) => e.object),
      lines: entries.map((e) => e.line),
      entries,
      others: failed ? [] : shiftedParts.flatMap((p) => p.others),
      syntaxErrors,
      invalidObjects: capped(
        shiftedParts.flatMap((p) => p.invalidObjects),
        file,
      ),
    },
    documents,
  };
}

/**
 * The text between `---` lines, each with the line (1-based) it starts at in the file. Pieces are slices of the
 * text found by position (no array of every line: a file of 1,000 routes has 20,000).
 */
function splitDocuments(text: string): { readonly text: string; readonly line: number }[] {
  const pieces: { text: string; line: number }[] = [];
  // A `---` line: at the start or after a newline, up to a newline or the end (no `m` flag: only `\n` ends a line).
  const separator = /(?:^|\n)(---[ \t\r]*)(?=\n|$)/g;
  let start = 0;
  let startLine = 1;
  let counted = 0;
  let line = 1;
  const lineAt = (offset: number): number => {
    for (let at = text.indexOf('\n', counted); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
      line++;
      counted = at + 1;
    }
    return line;
  };
  for (let match = separator.exec(text); match !== null; match = separator.exec(text)) {
    const lineStart = text[match.index] === '\n' ? match.index + 1 : match.index;
    const piece = text.slice(start, lineStart);
    if (piece.trim() !== '' || lineStart > start) pieces.push({ text: piece, line: startLine });
    const end = lineStart + (match[1] as string).length;
    startLine = lineAt(lineStart) + 1;
    // The separator line's newline ends it; one that ends the text leaves no piece after it.
    start = end + 1;
    separator.lastIndex = end;
  }
  if (start <= text.length) {
    const piece = text.slice(start);
    pieces.push({ text: piece, line: startLine });
  }
  return pieces;
}

/**
 * A kept document placed in its file: the same entry objects wherever it now starts, so that an edit elsewhere in
 * its file (one that adds or removes lines above it too) leaves them as they were for the duplicate index and the
 * object store, which then walk only what changed. An entry's line is looked up, not copied: it reads where its
 * document was last placed, so a problem reported later names the line in the file's current text. One place per
 * parsed document; the same text a second time in one file gets its own copy (`taken`).
 */
interface Place {
  line: number;
}

interface Placement {
  readonly place: Place;
  readonly entries: readonly ManifestEntry[];
}

const placements = new WeakMap<ParsedManifest, Placement>();

/** A freshly parsed entry (with its syntax tree) to the placed entry that stands for it once that tree is let go. */
const keptAs = new WeakMap<ManifestEntry, ManifestEntry>();

/**
 * The entry to keep for `entry` once its syntax tree is let go: for one parsed from a document just now, the
 * placed entry its document gives while it is kept (undefined for others).
 */
export function keptEntryOf(entry: ManifestEntry): ManifestEntry | undefined {
  return keptAs.get(entry);
}

function placedAt(parsed: ParsedManifest, line: number, taken: Set<ParsedManifest>): ParsedManifest {
  if (taken.has(parsed)) return shifted(parsed, line - 1);
  taken.add(parsed);
  let placement = placements.get(parsed);
  if (placement === undefined) {
    const place = { line };
    placement = { place, entries: parsed.entries.map((e) => placedEntry(e, place)) };
    placements.set(parsed, placement);
  } else placement.place.line = line;
  return { ...shifted({ ...parsed, entries: [] }, line - 1), entries: placement.entries };
}

/**
 * An entry whose lines (counted from its document's first line) follow where its document is placed: plain
 * objects with a `line` getter (a copy made by spreading one keeps the line of that moment).
 */
function placedEntry(entry: ManifestEntry, place: Place): ManifestEntry {
  const from = entry.line - 1;
  const duplicates =
    entry.duplicates.length === 0 ? entry.duplicates : entry.duplicates.map((d) => placedField(d, place));
  if (entry.source === undefined)
    return {
      object: entry.object,
      get line(): number {
        return place.line + from;
      },
      duplicates,
    };
  const source = entry.source;
  return {
    object: entry.object,
    get line(): number {
      return place.line + from;
    },
    duplicates,
    source,
  };
}

function placedField(field: FieldLocation, place: Place): FieldLocation {
  const from = field.line - 1;
  return {
    path: field.path,
    get line(): number {
      return place.line + from;
    },
  };
}

function shifted(parsed: ParsedManifest, by: number): ParsedManifest {
  if (by === 0) return parsed;
  const line = <T extends { readonly line: number }>(p: T): T => ({ ...p, line: p.line + by });
  const locate =
    (at: (path: string) => number) =>
    (path: string): number =>
      at(path) + by;
  return {
    objects: parsed.objects,
    lines: parsed.lines.map((l) => l + by),
    entries: parsed.entries.map((e) => {
      const moved: ManifestEntry = { ...e, line: e.line + by, duplicates: e.duplicates.map(line) };
      return e.locate ? { ...moved, locate: locate(e.locate) } : withoutLocate(moved);
    }),
    others: parsed.others.map((o) => ({ ...o, line: o.line + by, locate: locate(o.locate) })),
    syntaxErrors: parsed.syntaxErrors.map(line),
    invalidObjects: parsed.invalidObjects.map(line),
  };
}

function withoutLocate(entry: ManifestEntry): ManifestEntry {
  const { locate: _, ...rest } = entry;
  return rest;
}
