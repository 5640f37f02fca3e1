import type { CrdEntry } from './crd-entry.ts';

export type CrdDescription = Omit<CrdEntry, 'load'>;

/**
 * What describeCrd() would say of every CRD in a YAML file, read from the text without parsing it: the few keys
 * at the places controller-gen writes them (metadata.name; spec.group, names.kind, scope; each version's name,
 * served and schema.openAPIV3Schema). Parsing the shipped CRDs only to learn their kinds left 11 MiB of RSS
 * behind in every process. undefined whenever the text is not in that layout (flow style, anchors, block scalars
 * or quotes on those keys, a key missing): the caller then parses the file. Documents of other kinds are
 * skipped. Pure; crd-loader.ts does the I/O.
 */
export function scanCrds(text: string): CrdDescription[] | undefined {
  const out: CrdDescription[] = [];
  for (const doc of text.split(/^---[ \t]*$/m)) {
    const lines = doc.split('\n');
    const kindLines = lines.filter((line) => line.startsWith('kind:'));
    if (kindLines.length === 0) {
      // Blank or comments only; anything else (flow style) is for the parser.
      if (lines.some((line) => line.trim() !== '' && !line.trimStart().startsWith('#'))) return undefined;
      continue;
    }
    const kind = kindLines.length === 1 ? /^kind:\s*([A-Za-z0-9]+)\s*$/.exec(kindLines[0]!)?.[1] : undefined;
    if (kind === undefined) return undefined;
    if (kind !== 'CustomResourceDefinition') continue;
    const description = scanOne(lines);
    if (description === undefined) return undefined;
    out.push(description);
  }
  return out;
}

function scanOne(lines: readonly string[]): CrdDescription | undefined {
  const metadata = block(lines, 0, 'metadata');
  const spec = block(lines, 0, 'spec');
  if (metadata === undefined || spec === undefined) return undefined;
  if (!plainKeys(lines, 0) || !plainKeys(metadata, 2) || !plainKeys(spec, 2)) return undefined;
  const name = scalar(metadata, 2, 'name');
  const group = scalar(spec, 2, 'group');
  const scope = scalar(spec, 2, 'scope');
  const names = block(spec, 2, 'names');
  const kind = names === undefined || !plainKeys(names, 4) ? undefined : scalar(names, 4, 'kind');
  const versions = block(spec, 2, 'versions');
  if (!name || !group || !kind || (scope !== 'Namespaced' && scope !== 'Cluster') || versions === undefined) {
    return undefined;
  }
  const items = listItems(versions);
  if (items === undefined || items.length === 0) return undefined;
  const served: string[] = [];
  for (const { indent, lines: item } of items) {
    if (!plainKeys(item, indent)) return undefined;
    const version = scalar(item, indent, 'name');
    if (!version) return undefined;
    const servedValue = scalar(item, indent, 'served');
    if (servedValue !== undefined && servedValue !== 'true' && servedValue !== 'false') return undefined;
    const schema = block(item, indent, 'schema');
    const openApi = schema === undefined ? false : hasOpenApiSchema(schema);
    if (openApi === undefined) return undefined;
    if (servedValue !== 'false' && openApi) served.push(version);
  }
  return { name, group, kind, scope, versions: served };
}

/** Whether a version's `schema:` block holds `openAPIV3Schema` (quoted or not); undefined when unsure. */
function hasOpenApiSchema(schema: readonly string[]): boolean | undefined {
  const first = schema[0];
  if (first === undefined) return false;
  const key = first.trim();
  if (/^(openAPIV3Schema|"openAPIV3Schema"|'openAPIV3Schema'):$/.test(key)) return true;
  return undefined;
}

/** Whether every key at `indent` is a plain word: a quoted or odd key could be one of those looked for. */
function plainKeys(lines: readonly string[], indent: number): boolean {
  for (const line of lines) {
    const trimmed = line.trimStart();
    if (trimmed === '' || trimmed.startsWith('#') || line.length - trimmed.length !== indent) continue;
    if (trimmed.startsWith('- ') && indent > 0) continue;
    if (!/^[A-Za-z][A-Za-z0-9]*:( |$)/.test(trimmed)) return false;
  }
  return true;
}

/** The lines under `key:` (alone on its line at `indent`), up to the next line at that indent or less. */
function block(lines: readonly string[], indent: number, key: string): string[] | undefined {
  const head = `${' '.repeat(indent)}${key}:`;
  const start = lines.findIndex((line) => line === head || line.trimEnd() === head);
  if (start < 0) return undefined;
  const body: string[] = [];
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    const lineIndent = line.length - line.trimStart().length;
    // A list under the key may sit at the key's own indent (`key:\n- item`), as controller-gen writes it.
    if (lineIndent < indent || (lineIndent === indent && !line.trimStart().startsWith('- '))) break;
    body.push(line);
  }
  return body;
}

/** The plain value of `key: value` at `indent` in these lines; undefined when absent or not a plain scalar. */
function scalar(lines: readonly string[], indent: number, key: string): string | undefined {
  const prefix = `${' '.repeat(indent)}${key}:`;
  for (const line of lines) {
    if (!line.startsWith(prefix)) continue;
    const value = line.slice(prefix.length).trim();
    return /^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(value) ? value : undefined;
  }
  return undefined;
}

/**
 * The items of a block list (dashes at one indent, the first line's), each re-indented as if its dash were a
 * space, with the indent of its keys; undefined when the lines are not such a list.
 */
function listItems(lines: readonly string[]): { indent: number; lines: string[] }[] | undefined {
  const first = lines[0];
  if (first === undefined) return [];
  const dashIndent = first.length - first.trimStart().length;
  const dash = `${' '.repeat(dashIndent)}- `;
  if (!first.startsWith(dash)) return undefined;
  const items: { indent: number; lines: string[] }[] = [];
  for (const line of lines) {
    if (line.startsWith(dash)) {
      items.push({
        indent: dashIndent + 2,
        lines: [`${' '.repeat(dashIndent + 2)}${line.slice(dash.length)}`],
      });
    } else items.at(-1)?.lines.push(line);
  }
  return items;
}
