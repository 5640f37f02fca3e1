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
  /** Syntax errors make the whole file unusable; invalid objects are skipped one by one. */
  readonly syntaxErrors: readonly ManifestProblem[];
  readonly invalidObjects: readonly ManifestProblem[];
}

/**
 * Parses one multi-document YAML file the way `kubectl apply -f` reads it: `---` separated objects,
 * `kind: List` expanded, namespaced objects without a namespace put in `default`.
 */
export function parseManifest(file: string, text: string, options: DecodeOptions = {}): ParsedManifest {
  const lineCounter = new LineCounter();
  const documents = parseAllDocuments(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const docs = Array.isArray(documents) ? documents : [documents];
  const syntaxErrors: ManifestProblem[] = [];
  const invalidObjects: ManifestProblem[] = [];
  const objects: AnyResource[] = [];

  for (const doc of docs) {
    for (const error of doc.errors) {
      const line = lineCounter.linePos(error.pos[0]).line;
      syntaxErrors.push({ file, line, message: error.message.split('\n')[0] ?? error.message });
    }
    if (doc.errors.length > 0) continue;
    const line = lineCounter.linePos(doc.contents?.range?.[0] ?? 0).line;
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) continue;
    for (const item of expandList(value)) {
      const decoded = decodeResource(item, options);
      if (decoded.ok) objects.push(withDefaultNamespace(decoded.object));
      else if (!decoded.ignored) invalidObjects.push({ file, line, message: decoded.reason });
    }
  }
  return { objects: syntaxErrors.length > 0 ? [] : objects, syntaxErrors, invalidObjects };
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
