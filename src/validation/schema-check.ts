import { isRecord } from '../snapshot/json-object.ts';
import type { SchemaNode } from './compiled-schema.ts';
import { childPath, type FieldError, fieldError, formatValue, indexPath, keyPath } from './field-errors.ts';
import { jsonTypeOf } from './schema-types.ts';

/**
 * OpenAPI value validation as kube-openapi runs it for CRDs (types, enums, lengths, patterns, formats,
 * bounds, required, anyOf/oneOf/not) plus the list-type invariants (set items and map keys unique), each
 * error worded like apiextensions-apiserver words it.
 */
export function checkSchema(node: SchemaNode, value: unknown, path: string, errors: FieldError[]): void {
  if (value === null) {
    if (node.schema.nullable !== true && node.type !== '')
      errors.push(fieldError.typeInvalid(path, 'null', expected(node)));
    return;
  }
  if (!typeMatches(node, value)) {
    errors.push(
      fieldError.typeInvalid(
        path,
        jsonTypeOf(value) === 'integer' ? 'number' : jsonTypeOf(value),
        expected(node),
      ),
    );
    return;
  }
  const s = node.schema;
  if (node.enumValues && !node.enumValues.has(value)) {
    errors.push(fieldError.notSupported(path, value, s.enum ?? []));
  }
  if (typeof value === 'string') checkString(node, value, path, errors);
  else if (typeof value === 'number') checkNumber(node, value, path, errors);
  else if (Array.isArray(value)) checkArray(node, value, path, errors);
  else if (isRecord(value)) checkObject(node, value, path, errors);
  if (node.combinators) checkCombinators(node, value, path, errors);
}

function expected(node: SchemaNode): string {
  return node.type === '' ? 'integer,string' : node.type;
}

function typeMatches(node: SchemaNode, value: unknown): boolean {
  if (node.schema['x-kubernetes-int-or-string']) {
    return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));
  }
  switch (node.type) {
    case '':
      return true;
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isRecord(value);
    default:
      return true;
  }
}

function checkString(node: SchemaNode, value: string, path: string, errors: FieldError[]): void {
  const s = node.schema;
  // Lengths count code points (Go's RuneCountInString); UTF-16 length is an upper bound, so count rarely.
  if (s.maxLength !== undefined && value.length > s.maxLength && runes(value) > s.maxLength) {
    errors.push(fieldError.tooLong(path, s.maxLength));
  }
  if (s.minLength !== undefined && value.length < 2 * s.minLength && runes(value) < s.minLength) {
    errors.push(
      fieldError.invalid(path, value, `${path} in body should be at least ${s.minLength} chars long`),
    );
  }
  if (node.pattern && !node.pattern.test(value)) {
    errors.push(fieldError.invalid(path, value, `${path} in body should match '${s.pattern}'`));
  }
  if (node.format && !node.format(value)) {
    errors.push({
      reason: 'FieldValueTypeInvalid',
      message: `Invalid value: ${formatValue(value)}: ${path} in body must be of type ${s.format}: ${formatValue(value)}`,
      field: path,
    });
  }
}

function runes(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

function checkNumber(node: SchemaNode, value: number, path: string, errors: FieldError[]): void {
  const s = node.schema;
  if (s.maximum !== undefined && (s.exclusiveMaximum ? value >= s.maximum : value > s.maximum)) {
    const op = s.exclusiveMaximum ? 'less than' : 'less than or equal to';
    errors.push(fieldError.invalid(path, value, `${path} in body should be ${op} ${s.maximum}`));
  }
  if (s.minimum !== undefined && (s.exclusiveMinimum ? value <= s.minimum : value < s.minimum)) {
    const op = s.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
    errors.push(fieldError.invalid(path, value, `${path} in body should be ${op} ${s.minimum}`));
  }
  if (s.multipleOf !== undefined && value % s.multipleOf !== 0) {
    errors.push(fieldError.invalid(path, value, `${path} in body should be a multiple of ${s.multipleOf}`));
  }
}

function checkArray(node: SchemaNode, value: readonly unknown[], path: string, errors: FieldError[]): void {
  const s = node.schema;
  if (s.maxItems !== undefined && value.length > s.maxItems) {
    errors.push(fieldError.tooMany(path, value.length, s.maxItems));
  }
  if (s.minItems !== undefined && value.length < s.minItems) {
    errors.push(
      fieldError.invalid(path, value.length, `${path} in body should have at least ${s.minItems} items`),
    );
  }
  const items = node.items;
  if (items) for (let i = 0; i < value.length; i++) checkSchema(items, value[i], indexPath(path, i), errors);
  const listType = s['x-kubernetes-list-type'];
  if (listType === 'set') checkSet(value, path, errors);
  else if (listType === 'map') checkMapList(value, s['x-kubernetes-list-map-keys'] ?? [], node, path, errors);
}

function checkSet(value: readonly unknown[], path: string, errors: FieldError[]): void {
  const seen = new Set<string>();
  value.forEach((item, i) => {
    const key = JSON.stringify(item);
    if (seen.has(key)) errors.push(fieldError.duplicate(indexPath(path, i), item));
    seen.add(key);
  });
}

/** list-type map: the list-map-keys identify an item; absent keys count as their schema default. */
function checkMapList(
  value: readonly unknown[],
  keys: readonly string[],
  node: SchemaNode,
  path: string,
  errors: FieldError[],
): void {
  const seen = new Set<string>();
  value.forEach((item, i) => {
    if (!isRecord(item)) return;
    const id: Record<string, unknown> = {};
    for (const k of keys) {
      const v = item[k] ?? node.items?.properties?.get(k)?.schema.default;
      if (v !== undefined) id[k] = v;
    }
    const key = JSON.stringify(id);
    if (seen.has(key)) errors.push(fieldError.duplicate(indexPath(path, i), id));
    seen.add(key);
  });
}

function checkObject(
  node: SchemaNode,
  value: Readonly<Record<string, unknown>>,
  path: string,
  errors: FieldError[],
): void {
  const s = node.schema;
  const count = Object.keys(value).length;
  if (s.maxProperties !== undefined && count > s.maxProperties) {
    errors.push(fieldError.tooMany(path, count, s.maxProperties));
  }
  if (s.minProperties !== undefined && count < s.minProperties) {
    errors.push(
      fieldError.invalid(path, count, `${path} in body should have at least ${s.minProperties} properties`),
    );
  }
  for (const key of s.required ?? []) {
    if (value[key] === undefined) errors.push(fieldError.required(childPath(path, key)));
  }
  for (const key in value) {
    const child = value[key];
    if (child === undefined) continue;
    const prop = node.properties?.get(key);
    if (prop) checkSchema(prop, child, childPath(path, key), errors);
    else if (node.mapValues) checkSchema(node.mapValues, child, keyPath(path, key), errors);
  }
}

function passes(node: SchemaNode, value: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  checkSchema(node, value, path, errors);
  return errors;
}

function checkCombinators(node: SchemaNode, value: unknown, path: string, errors: FieldError[]): void {
  const type = jsonTypeOf(value) === 'integer' ? 'number' : jsonTypeOf(value);
  for (const all of node.allOf) errors.push(...passes(all, value, path));
  if (node.anyOf.length > 0) {
    const results = node.anyOf.map((n) => passes(n, value, path));
    if (!results.some((r) => r.length === 0)) {
      errors.push(...results.flat());
      errors.push(
        fieldError.invalid(path, type, `${path} in body must validate at least one schema (anyOf)`),
      );
    }
  }
  if (node.oneOf.length > 0) {
    const results = node.oneOf.map((n) => passes(n, value, path));
    const valid = results.filter((r) => r.length === 0).length;
    if (valid === 0) {
      errors.push(...results.flat());
      errors.push(
        fieldError.invalid(
          path,
          type,
          `${path} in body must validate one and only one schema (oneOf). Found none valid`,
        ),
      );
    } else if (valid > 1) {
      errors.push(
        fieldError.invalid(
          path,
          type,
          `${path} in body must validate one and only one schema (oneOf). Found ${valid} valid alternatives`,
        ),
      );
    }
  }
  if (node.not && passes(node.not, value, path).length === 0) {
    errors.push(fieldError.invalid(path, type, `${path} in body must not validate the schema (not)`));
  }
}
