import { existsSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import {
  at,
  isObject,
  type Json,
  type JsonObject,
  list,
  loadYamlDocuments,
  ManifestError,
  REPO_ROOT,
  str,
} from './manifests.ts';

/** A Kubernetes object from a kustomization, with the file and line it came from. */
export interface BuiltObject {
  readonly file: string;
  readonly line: number;
  readonly object: JsonObject;
}

/**
 * The part of `kubectl kustomize` these manifests use: `resources` (files and directories with their own
 * kustomization.yaml) and JSON6902 `patches` with a `target` (kind, name, optionally group/version). Enough to
 * check what the API server will receive without kubectl; anything else in a kustomization is rejected so the
 * tests cannot silently ignore it.
 */
export function buildKustomization(dir: string): BuiltObject[] {
  const path = join(dir, 'kustomization.yaml');
  const [doc, ...extra] = loadYamlDocuments(path);
  if (doc === undefined || extra.length > 0 || !isObject(doc.value)) {
    throw new ManifestError(`${relative(REPO_ROOT, path)}: expected one kustomization document`);
  }
  const k = doc.value as JsonObject;
  const known = new Set(['apiVersion', 'kind', 'resources', 'patches', 'images']);
  for (const key of Object.keys(k)) {
    if (!known.has(key))
      throw new ManifestError(`${doc.file}: field ${key} is not understood by the test build`);
  }
  const objects: BuiltObject[] = [];
  for (const entry of list(k['resources'])) {
    const name = str(entry);
    if (name === undefined) throw new ManifestError(`${doc.file}: resources entries must be strings`);
    const target = join(dir, name);
    if (!existsSync(target)) throw new ManifestError(`${doc.file}: resource ${name} does not exist`);
    if (statSync(target).isDirectory()) {
      objects.push(...buildKustomization(target));
    } else {
      for (const d of loadYamlDocuments(target)) {
        if (!isObject(d.value)) throw new ManifestError(`${d.file}:${d.line}: not an object`);
        objects.push({ file: d.file, line: d.line, object: d.value as JsonObject });
      }
    }
  }
  for (const patch of list(k['patches'])) {
    applyPatch(doc.file, patch, objects);
  }
  return objects;
}

function applyPatch(file: string, patch: Json, objects: BuiltObject[]): void {
  const target = at(patch, 'target');
  const ops = str(at(patch, 'patch'));
  if (!isObject(target) || ops === undefined) {
    throw new ManifestError(`${file}: only inline JSON6902 patches with a target are supported`);
  }
  const matches = objects.filter((o) => matchesTarget(o.object, target));
  if (matches.length === 0)
    throw new ManifestError(`${file}: patch target ${JSON.stringify(target)} matches nothing`);
  const parsed = parse(ops) as Json;
  for (const m of matches) {
    for (const op of list(parsed)) applyOperation(file, m.object, op);
  }
}

export function matchesTarget(object: JsonObject, target: JsonObject): boolean {
  const apiVersion = str(object['apiVersion']) ?? '';
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  if (target['kind'] !== undefined && target['kind'] !== object['kind']) return false;
  if (target['name'] !== undefined && target['name'] !== at(object, 'metadata', 'name')) return false;
  if (target['namespace'] !== undefined && target['namespace'] !== at(object, 'metadata', 'namespace'))
    return false;
  if (target['group'] !== undefined && target['group'] !== group) return false;
  if (target['version'] !== undefined && target['version'] !== version) return false;
  return true;
}

/** RFC 6902 add / replace / remove, the operations these kustomizations use. */
function applyOperation(file: string, object: JsonObject, op: Json): void {
  const kind = str(at(op, 'op'));
  const path = str(at(op, 'path'));
  if (kind === undefined || path === undefined || !path.startsWith('/')) {
    throw new ManifestError(`${file}: bad patch operation ${JSON.stringify(op)}`);
  }
  const keys = path
    .slice(1)
    .split('/')
    .map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = keys.pop()!;
  let parent: Json | undefined = object;
  for (const key of keys) parent = isObject(parent) ? parent[key] : undefined;
  if (!isObject(parent)) throw new ManifestError(`${file}: patch path ${path} has no parent object`);
  if (kind === 'add') {
    parent[last] = at(op, 'value') ?? null;
  } else if (kind === 'replace' || kind === 'remove') {
    if (!(last in parent)) throw new ManifestError(`${file}: ${kind} of missing path ${path}`);
    if (kind === 'remove') delete parent[last];
    else parent[last] = at(op, 'value') ?? null;
  } else {
    throw new ManifestError(`${file}: unsupported patch op ${kind}`);
  }
}
