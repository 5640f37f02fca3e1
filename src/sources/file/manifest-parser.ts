import { Composer, isMap, isScalar, isSeq, LineCounter, type Node, Parser } from 'yaml';
import { runAllSteps, type Steps } from '../../ir/steps.ts';
import { type DecodeOptions, decodeResource } from '../../snapshot/decode.ts';
import type { AnyResource } from '../../snapshot/resources.ts';
import { CLUSTER_SCOPED_KINDS } from '../../snapshot/resources.ts';

export interface ManifestProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
  /** A field dropped with --validation=warn: the object is in effect. */
  readonly warning?: true;
}

/** A field written in a file: its path in the object (`spec.rules[0].matches`) and its line. */
export interface FieldLocation {
  readonly path: string;
  readonly line: number;
}

/** One object as written: where it starts, where each of its fields is, and the keys written twice in it. */
export interface ManifestEntry {
  readonly object: AnyResource;
  readonly line: number;
  /**
   * The line of the field at `path` (field.Path syntax), or of its nearest ancestor written in the file; absent
   * once the file's syntax tree is let go (the object's line then stands for every field).
   */
  readonly locate?: (path: string) => number;
  /** Keys repeated in one mapping (the last one wins when they are not refused), each at its repeat. */
  readonly duplicates: readonly FieldLocation[];
  /** The YAML document it was written in, as text: the same text is the same object (object-store.ts). */
  readonly source?: string;
}

/** A document that is not an object of the gateway: refused (no name or bad envelope) or of another kind. */
export interface OtherDocument {
  readonly line: number;
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string | undefined;
  readonly namespace: string | undefined;
  /** Why it is refused; undefined when it is well formed but of a kind the gateway does not read. */
  readonly refused: string | undefined;
  /** The line of a field of the document, as ManifestEntry.locate. */
  locate(path: string): number;
}

export interface ParsedManifest {
  readonly objects: readonly AnyResource[];
  /** The line each object starts at, by index in `objects`. */
  readonly lines: readonly number[];
  /** `objects` with where they were written, by the same index. */
  readonly entries: readonly ManifestEntry[];
  /** Documents that are not objects the gateway reads (their kinds are checked by the file source). */
  readonly others: readonly OtherDocument[];
  /** Syntax errors make the whole file unusable; invalid objects are skipped one by one. */
  readonly syntaxErrors: readonly ManifestProblem[];
  readonly invalidObjects: readonly ManifestProblem[];
}

/** Alias expansions per document; more is refused as an alias bomb ("billion laughs"). */
const MAX_ALIAS_COUNT = 100;

/**
 * Parses one multi-document YAML file the way `kubectl apply -f` reads it: `---` separated objects,
 * `kind: List` expanded, namespaced objects without a namespace put in `default`. Never throws: whatever
 * the parser throws (an undefined alias, an alias bomb, a stack overflow) becomes a syntax error of this file.
 */
export function parseManifest(file: string, text: string, options: DecodeOptions = {}): ParsedManifest {
  return runAllSteps(parseManifestInSteps(file, text, options));
}

/**
 * parseManifest as steps (ir/steps.ts): a pause is possible after each document, so that the file source can
 * parse a file of 1,000 routes without holding up requests for its whole length.
 */
export function* parseManifestInSteps(
  file: string,
  text: string,
  options: DecodeOptions = {},
): Steps<ParsedManifest> {
  if (flowDepth(text) > MAX_FLOW_DEPTH) {
    const message = `flow collections nest deeper than ${MAX_FLOW_DEPTH} levels: the file is refused unparsed`;
    return failed(file, 1, message);
  }
  const jsonError = /\.json$/i.test(file) ? jsonSyntaxError(text) : undefined;
  if (jsonError !== undefined) return failed(file, jsonError.line, jsonError.message);
  try {
    return yield* parseDocuments(file, text, options);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return failed(file, 1, message.split('\n')[0] ?? message);
  }
}

/**
 * A `.json` file is JSON, as kubectl reads a stream that starts with `{`: a trailing comma or a comment there is a
 * syntax error, though YAML's flow mappings would take it. The line is that of the error's position.
 */
function jsonSyntaxError(text: string): { line: number; message: string } | undefined {
  const body = text.replace(/^\uFEFF/, '');
  if (!body.trimStart().startsWith('{')) return undefined;
  try {
    JSON.parse(body);
    return undefined;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const position = /position (\d+)/.exec(message);
    const line = position ? body.slice(0, Number(position[1])).split('\n').length : 1;
    return { line, message: `invalid JSON: ${message.replace(/ in JSON at position \d+.*$/, '')}` };
  }
}

function failed(file: string, line: number, message: string): ParsedManifest {
  return {
    objects: [],
    lines: [],
    entries: [],
    others: [],
    syntaxErrors: [{ file, line, message }],
    invalidObjects: [],
  };
}

function* parseDocuments(file: string, text: string, options: DecodeOptions): Steps<ParsedManifest> {
  const lineCounter = new LineCounter();
  // What parseAllDocuments does, a document at a time: the parser and the composer are lazy generators.
  // Repeated keys are not a syntax error here: they are one object's problem (a strict decoding error, as the
  // API server reports them), found below with their paths.
  const docs = new Composer({
    uniqueKeys: false,
    // `<<: *anchor` merge keys, as kubectl's YAML 1.1 reader (go-yaml) expands them.
    merge: true,
  }).compose(new Parser(lineCounter.addNewLine).parse(text));
  const syntaxErrors: ManifestProblem[] = [];
  const invalidObjects: ManifestProblem[] = [];
  const entries: ManifestEntry[] = [];
  const others: OtherDocument[] = [];
  const lineOf = (node: Node | null | undefined): number => lineCounter.linePos(node?.range?.[0] ?? 0).line;

  for (const doc of docs) {
    yield;
    for (const error of doc.errors) {
      const line = lineCounter.linePos(error.pos[0]).line;
      syntaxErrors.push({ file, line, message: error.message.split('\n')[0] ?? error.message });
    }
    if (doc.errors.length > 0) continue;
    const line = lineOf(doc.contents);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      syntaxErrors.push({ file, line, message: aliasMessage(err) });
      continue;
    }
    if (value === null || value === undefined) continue;
    const items = expandList(value);
    const itemNodes = items === undefined ? [doc.contents] : listItemNodes(doc.contents);
    for (const [i, item] of (items ?? [value]).entries()) {
      const node = itemNodes[i] ?? doc.contents;
      const itemLine = lineOf(node);
      const decoded = decodeResource(item, options);
      if (decoded.ok) {
        entries.push({
          object: withDefaultNamespace(decoded.object),
          line: itemLine,
          locate: (path) => locate(node, path, lineOf),
          duplicates: duplicatesOf(node, lineOf),
          source: text.slice(doc.range[0], doc.range[2]),
        });
        continue;
      }
      if (!decoded.ignored) {
        invalidObjects.push({ file, line: itemLine, message: decoded.reason });
        // A repeated key is often why the envelope is wrong (`kind:` twice): say so at its line.
        for (const d of duplicateKeys(node, '', lineOf))
          invalidObjects.push({
            file,
            line: d.line,
            message: `${d.path}: duplicate field "${d.path.split('.').at(-1)}"`,
          });
      }
      others.push({
        line: itemLine,
        ...envelope(item),
        refused: decoded.ignored ? undefined : decoded.reason,
        locate: (path) => locate(node, path, lineOf),
      });
    }
  }
  const failedFile = syntaxErrors.length > 0;
  const kept = failedFile ? [] : entries;
  return {
    objects: kept.map((e) => e.object),
    lines: kept.map((e) => e.line),
    entries: kept,
    others: failedFile ? [] : others,
    syntaxErrors: capped(syntaxErrors, file),
    invalidObjects: capped(invalidObjects, file),
  };
}

function envelope(item: unknown): Pick<OtherDocument, 'apiVersion' | 'kind' | 'name' | 'namespace'> {
  const record = typeof item === 'object' && item !== null ? (item as Record<string, unknown>) : {};
  const meta =
    typeof record.metadata === 'object' && record.metadata !== null
      ? (record.metadata as Record<string, unknown>)
      : {};
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  return {
    apiVersion: text(record.apiVersion) ?? '',
    kind: text(record.kind) ?? '',
    name: text(meta.name),
    namespace: text(meta.namespace),
  };
}

function listItemNodes(contents: unknown): readonly (Node | null)[] {
  if (!isMap(contents)) return [];
  const items = contents.get('items', true);
  return isSeq(items) ? (items.items as (Node | null)[]) : [];
}

/** `spec.rules[0].backendRefs[1].port` or `metadata.labels[app.kubernetes.io/name]` as its segments. */
export function pathSegments(path: string): string[] {
  const segments: string[] = [];
  let i = 0;
  while (i < path.length) {
    if (path[i] === '.') i++;
    else if (path[i] === '[') {
      const close = path.indexOf(']', i);
      const end = close < 0 ? path.length : close;
      segments.push(path.slice(i + 1, end));
      i = end + 1;
    } else {
      let end = i;
      while (end < path.length && path[end] !== '.' && path[end] !== '[') end++;
      segments.push(path.slice(i, end));
      i = end;
    }
  }
  return segments;
}

/** The line of the deepest field of `path` present under `node`: a key's line, or a list item's. */
function locate(node: unknown, path: string, lineOf: (node: Node | null | undefined) => number): number {
  let current: unknown = node;
  let line = lineOf(node as Node);
  for (const segment of pathSegments(path)) {
    if (isMap(current)) {
      // The last of repeated keys, as toJS keeps.
      const pair = current.items.findLast((p) => (isScalar(p.key) ? String(p.key.value) : p.key) === segment);
      if (!pair) break;
      line = lineOf(pair.key as Node);
      current = pair.value;
    } else if (isSeq(current) && /^\d+$/.test(segment)) {
      const item = current.items[Number(segment)];
      if (item === undefined) break;
      line = lineOf(item as Node);
      current = item;
    } else break;
  }
  return line;
}

const NO_DUPLICATES: readonly FieldLocation[] = [];

function duplicatesOf(
  node: unknown,
  lineOf: (node: Node | null | undefined) => number,
): readonly FieldLocation[] {
  const found = duplicateKeys(node, '', lineOf);
  return found.length > 0 ? found : NO_DUPLICATES;
}

/** Keys written twice in one mapping, anywhere under `node`, by path and the line of each repeat. */
function duplicateKeys(
  node: unknown,
  path: string,
  lineOf: (node: Node | null | undefined) => number,
): FieldLocation[] {
  const out: FieldLocation[] = [];
  const walk = (current: unknown, at: string, depth: number): void => {
    if (depth > MAX_FLOW_DEPTH) return;
    if (isMap(current)) {
      const seen = new Set<string>();
      for (const pair of current.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
        if (key === undefined) continue;
        const child = at ? `${at}.${key}` : key;
        if (seen.has(key)) out.push({ path: child, line: lineOf(pair.key as Node) });
        seen.add(key);
        walk(pair.value, child, depth + 1);
      }
    } else if (isSeq(current)) {
      current.items.forEach((item, i) => {
        walk(item, `${at}[${i}]`, depth + 1);
      });
    }
  };
  walk(node, path, 0);
  return out;
}

/** Kubernetes objects nest a few levels; thousands only serve to exhaust a recursive parser's stack. */
const MAX_FLOW_DEPTH = 256;

/** The deepest `[`/`{` nesting outside quoted strings (a cheap scan before the parser sees the text). */
function flowDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let quote = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (quote !== 0) {
      if (c === quote || c === 10) quote = 0;
    } else if (c === 34 || c === 39) quote = c;
    else if (c === 91 || c === 123) {
      if (++depth > max) max = depth;
    } else if ((c === 93 || c === 125) && depth > 0) depth--;
  }
  return max;
}

/** Problems listed per file and kind; a garbage file must not flood /config_dump and the log. */
const MAX_PROBLEMS_PER_FILE = 20;

export function capped(all: ManifestProblem[], file: string): ManifestProblem[] {
  const seen = new Set<string>();
  const problems = all.filter((p) => {
    const key = `${p.line}:${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (problems.length <= MAX_PROBLEMS_PER_FILE) return problems;
  const more = problems.length - MAX_PROBLEMS_PER_FILE;
  return [
    ...problems.slice(0, MAX_PROBLEMS_PER_FILE),
    { file, line: problems[MAX_PROBLEMS_PER_FILE]!.line, message: `... and ${more} more problems` },
  ];
}

function aliasMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/excessive alias count/i.test(message)) {
    return `more than ${MAX_ALIAS_COUNT} alias expansions (an alias bomb?): the file is refused`;
  }
  return message.split('\n')[0] ?? message;
}

/** The items of a `kind: List`, undefined for any other document. */
function expandList(value: unknown): readonly unknown[] | undefined {
  if (typeof value === 'object' && value !== null && 'kind' in value && 'items' in value) {
    const { kind, items } = value as { kind: unknown; items: unknown };
    if (kind === 'List' && Array.isArray(items)) return items;
  }
  return undefined;
}

function withDefaultNamespace(object: AnyResource): AnyResource {
  if (CLUSTER_SCOPED_KINDS.has(object.kind) || object.metadata.namespace) return object;
  return { ...object, metadata: { ...object.metadata, namespace: 'default' } } as AnyResource;
}
