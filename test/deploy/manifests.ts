import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LineCounter, parseAllDocuments } from 'yaml';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const DEPLOY_DIR = join(REPO_ROOT, 'deploy');

/** One YAML document of a manifest file, with where it starts (for messages that name file and line). */
export interface ManifestDoc {
  /** Path relative to the repository root. */
  readonly file: string;
  readonly line: number;
  readonly value: unknown;
}

export class ManifestError extends Error {
  readonly code = 'ManifestError';
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses every document of a YAML file; a syntax error names the file and line. Empty documents are skipped. */
export function loadYamlDocuments(path: string): ManifestDoc[] {
  const file = relative(REPO_ROOT, path);
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(readFileSync(path, 'utf8'), { lineCounter, prettyErrors: false });
  const out: ManifestDoc[] = [];
  for (const doc of docs) {
    const [error] = doc.errors;
    if (error !== undefined) {
      const { line } = lineCounter.linePos(error.pos[0]);
      throw new ManifestError(`${file}:${line}: ${error.message}`);
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    const start = doc.contents?.range[0] ?? 0;
    out.push({ file, line: lineCounter.linePos(start).line, value });
  }
  return out;
}

/** Every `.yaml`/`.yml` file under `dir`, sorted, as absolute paths. */
export function listYamlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listYamlFiles(path));
    else if (/\.ya?ml$/.test(name)) out.push(path);
  }
  return out;
}

export function where(doc: ManifestDoc): string {
  return `${doc.file}:${doc.line}`;
}

export function str(value: Json | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Follows a path of keys and indexes; undefined as soon as one is missing. */
export function at(value: Json | undefined, ...path: (string | number)[]): Json | undefined {
  let current: Json | undefined = value;
  for (const key of path) {
    if (typeof key === 'number') current = Array.isArray(current) ? current[key] : undefined;
    else current = isObject(current) ? current[key] : undefined;
  }
  return current;
}

export function list(value: Json | undefined): Json[] {
  return Array.isArray(value) ? value : [];
}
