import { isRecord } from '../../snapshot/json-object.ts';
import { ApiFailure, badRequest } from './api-status.ts';
import { clone, deepEqual } from './json.ts';

/** RFC 7386 JSON Merge Patch: objects merge, `null` deletes, everything else (arrays too) replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return clone(patch);
  const result: Record<string, unknown> = isRecord(target) ? clone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

/** RFC 6902 JSON Patch. A failed `test` or a missing path fails the whole patch, as kube-apiserver does. */
export function applyJsonPatch(target: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw badRequest('json patch must be an array of operations');
  let doc = clone(target);
  for (const op of operations) {
    if (!isRecord(op) || typeof op.op !== 'string' || typeof op.path !== 'string') {
      throw badRequest('json patch operation must have "op" and "path"');
    }
    const path = parsePointer(op.path);
    switch (op.op) {
      case 'add':
        doc = add(doc, path, clone(op.value));
        break;
      case 'remove':
        doc = remove(doc, path);
        break;
      case 'replace':
        get(doc, path);
        doc = remove(doc, path);
        doc = add(doc, path, clone(op.value));
        break;
      case 'move': {
        if (typeof op.from !== 'string') throw badRequest('move operation requires "from"');
        const from = parsePointer(op.from);
        const value = get(doc, from);
        doc = add(remove(doc, from), path, value);
        break;
      }
      case 'copy': {
        if (typeof op.from !== 'string') throw badRequest('copy operation requires "from"');
        doc = add(doc, path, clone(get(doc, parsePointer(op.from))));
        break;
      }
      case 'test':
        if (!deepEqual(get(doc, path), op.value)) {
          throw new ApiFailure(
            422,
            'Invalid',
            `the server rejected our request due to an error in our request: testing value ${op.path} failed`,
          );
        }
        break;
      default:
        throw badRequest(`unexpected json patch operation "${op.op}"`);
    }
  }
  return doc;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw badRequest(`invalid JSON pointer "${pointer}"`);
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function missing(path: readonly string[]): ApiFailure {
  return new ApiFailure(
    422,
    'Invalid',
    `the server rejected our request due to an error in our request: doc is missing path: "/${path.join('/')}"`,
  );
}

function get(doc: unknown, path: readonly string[]): unknown {
  let node = doc;
  for (const part of path) {
    if (Array.isArray(node)) {
      const index = Number(part);
      if (!Number.isInteger(index) || index < 0 || index >= node.length) throw missing(path);
      node = node[index];
    } else if (isRecord(node) && part in node) {
      node = node[part];
    } else {
      throw missing(path);
    }
  }
  return node;
}

function add(doc: unknown, path: readonly string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const parent = get(doc, path.slice(0, -1));
  const last = path[path.length - 1] as string;
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length) throw missing(path);
    parent.splice(index, 0, value);
  } else if (isRecord(parent)) {
    parent[last] = value;
  } else {
    throw missing(path);
  }
  return doc;
}

function remove(doc: unknown, path: readonly string[]): unknown {
  if (path.length === 0) return undefined;
  const parent = get(doc, path.slice(0, -1));
  const last = path[path.length - 1] as string;
  if (Array.isArray(parent)) {
    const index = Number(last);
    if (!Number.isInteger(index) || index < 0 || index >= parent.length) throw missing(path);
    parent.splice(index, 1);
  } else if (isRecord(parent) && last in parent) {
    delete parent[last];
  } else {
    throw missing(path);
  }
  return doc;
}
