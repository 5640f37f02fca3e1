import { LineCounter, parseAllDocuments } from 'yaml';
import type { AnyResource } from '../../snapshot/resources.ts';
import { CLUSTER_SCOPED_KINDS } from '../../snapshot/resources.ts';
import { type DecodeOptions, decodeResource } from '../decode.ts';

export interface ManifestProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

export interface ParsedManifest {
  readonly objects: readonly AnyResource[];
  /** The line each object starts at, by index in `objects`. */
  readonly lines: readonly number[];
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
  if (flowDepth(text) > MAX_FLOW_DEPTH) {
    const message = `flow collections nest deeper than ${MAX_FLOW_DEPTH} levels: the file is refused unparsed`;
    return { objects: [], lines: [], syntaxErrors: [{ file, line: 1, message }], invalidObjects: [] };
  }
  try {
    return parseDocuments(file, text, options);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return {
      objects: [],
      lines: [],
      syntaxErrors: [{ file, line: 1, message: message.split('\n')[0] ?? message }],
      invalidObjects: [],
    };
  }
}

function parseDocuments(file: string, text: string, options: DecodeOptions): ParsedManifest {
  const lineCounter = new LineCounter();
  const documents = parseAllDocuments(text, {
    lineCounter,
    prettyErrors: false,
    uniqueKeys: true,
  });
  const docs = Array.isArray(documents) ? documents : [documents];
  const syntaxErrors: ManifestProblem[] = [];
  const invalidObjects: ManifestProblem[] = [];
  const objects: AnyResource[] = [];
  const lines: number[] = [];

  for (const doc of docs) {
    for (const error of doc.errors) {
      const line = lineCounter.linePos(error.pos[0]).line;
      syntaxErrors.push({ file, line, message: error.message.split('\n')[0] ?? error.message });
    }
    if (doc.errors.length > 0) continue;
    const line = lineCounter.linePos(doc.contents?.range?.[0] ?? 0).line;
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      syntaxErrors.push({ file, line, message: aliasMessage(err) });
      continue;
    }
    if (value === null || value === undefined) continue;
    for (const item of expandList(value)) {
      const decoded = decodeResource(item, options);
      if (decoded.ok) {
        objects.push(withDefaultNamespace(decoded.object));
        lines.push(line);
      } else if (!decoded.ignored) invalidObjects.push({ file, line, message: decoded.reason });
    }
  }
  const failed = syntaxErrors.length > 0;
  return {
    objects: failed ? [] : objects,
    lines: failed ? [] : lines,
    syntaxErrors: capped(syntaxErrors, file),
    invalidObjects: capped(invalidObjects, file),
  };
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

function capped(all: ManifestProblem[], file: string): ManifestProblem[] {
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

function expandList(value: unknown): readonly unknown[] {
  if (typeof value === 'object' && value !== null && 'kind' in value && 'items' in value) {
    const { kind, items } = value as { kind: unknown; items: unknown };
    if (kind === 'List' && Array.isArray(items)) return items;
  }
  return [value];
}

function withDefaultNamespace(object: AnyResource): AnyResource {
  if (CLUSTER_SCOPED_KINDS.has(object.kind) || object.metadata.namespace) return object;
  return { ...object, metadata: { ...object.metadata, namespace: 'default' } } as AnyResource;
}
