import { isRecord } from '../../snapshot/json-object.ts';
import { badRequest } from './api-status.ts';
import type { JsonObject } from './json.ts';

/** Label selectors in the string form of `?labelSelector=` (k8s.io/apimachinery/pkg/labels). */
export type LabelRequirement =
  | { readonly op: '=' | '!='; readonly key: string; readonly value: string }
  | { readonly op: 'in' | 'notin'; readonly key: string; readonly values: readonly string[] }
  | { readonly op: 'exists' | '!exists'; readonly key: string };

export function parseLabelSelector(text: string | null): readonly LabelRequirement[] {
  if (!text) return [];
  const requirements: LabelRequirement[] = [];
  // Split on commas that are not inside a parenthesised value set.
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  for (const raw of parts) {
    const part = raw.trim();
    if (!part) continue;
    const set = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part);
    if (set) {
      const values = (set[3] ?? '').split(',').map((v) => v.trim());
      requirements.push({ op: set[2] as 'in' | 'notin', key: set[1] as string, values });
      continue;
    }
    const eq = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(part);
    if (eq) {
      requirements.push({ op: eq[2] === '!=' ? '!=' : '=', key: eq[1] as string, value: eq[3] as string });
      continue;
    }
    const exists = /^(!?)([A-Za-z0-9./_-]+)$/.exec(part);
    if (exists) {
      requirements.push({ op: exists[1] ? '!exists' : 'exists', key: exists[2] as string });
      continue;
    }
    throw badRequest(`unable to parse requirement: "${part}"`);
  }
  return requirements;
}

export function matchesLabels(obj: JsonObject, selector: readonly LabelRequirement[]): boolean {
  const meta = isRecord(obj.metadata) ? obj.metadata : {};
  const labels = isRecord(meta.labels) ? meta.labels : {};
  return selector.every((req) => {
    const has = Object.hasOwn(labels, req.key);
    const value = has ? String(labels[req.key]) : undefined;
    switch (req.op) {
      case '=':
        return value === req.value;
      case '!=':
        return value !== req.value;
      case 'in':
        return value !== undefined && req.values.includes(value);
      case 'notin':
        return value === undefined || !req.values.includes(value);
      case 'exists':
        return has;
      case '!exists':
        return !has;
    }
    return false;
  });
}

/** Field selectors: only `=`, `==` and `!=` on fields each resource supports, like kube-apiserver. */
export interface FieldRequirement {
  readonly field: string;
  readonly negate: boolean;
  readonly value: string;
}

export function parseFieldSelector(
  text: string | null,
  supported: readonly string[],
): readonly FieldRequirement[] {
  if (!text) return [];
  return text
    .split(',')
    .filter((p) => p.trim())
    .map((part) => {
      const m = /^\s*([^!=\s]+)\s*(==|=|!=)\s*(\S*)\s*$/.exec(part);
      if (!m) throw badRequest(`invalid field selector: "${part}"`);
      const field = m[1] as string;
      if (!supported.includes(field)) {
        throw badRequest(`field label not supported: ${field}`);
      }
      return { field, negate: m[2] === '!=', value: m[3] as string };
    });
}

export function matchesFields(obj: JsonObject, selector: readonly FieldRequirement[]): boolean {
  return selector.every((req) => {
    let node: unknown = obj;
    for (const part of req.field.split('.')) node = isRecord(node) ? node[part] : undefined;
    const value = node === undefined ? '' : String(node);
    return req.negate ? value !== req.value : value === req.value;
  });
}
