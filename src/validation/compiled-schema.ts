import type { CelRule, RuleCompiler } from './cel-rules.ts';
import { formatCheck } from './formats.ts';
import { compileRe2 } from './re2.ts';
import type { JsonSchema } from './schema-types.ts';

/**
 * A structural schema node compiled once: regexes built, enums in sets, rules parsed, and flags that let
 * the hot walks skip whole subtrees (no rules below, no CEL conversion needed).
 */
export interface SchemaNode {
  readonly schema: JsonSchema;
  /** `type`, with int-or-string reported as "" as the API server does. */
  readonly type: string;
  readonly properties: ReadonlyMap<string, SchemaNode> | undefined;
  /** additionalProperties as a schema: the node of every map value. */
  readonly mapValues: SchemaNode | undefined;
  readonly items: SchemaNode | undefined;
  readonly preserveUnknown: boolean;
  readonly pattern: RegExp | undefined;
  readonly format: ((value: string) => boolean) | undefined;
  readonly enumValues: ReadonlySet<unknown> | undefined;
  readonly defaults: readonly (readonly [string, unknown])[];
  readonly anyOf: readonly SchemaNode[];
  readonly oneOf: readonly SchemaNode[];
  readonly allOf: readonly SchemaNode[];
  readonly not: SchemaNode | undefined;
  /** Has allOf, anyOf, oneOf or not. */
  readonly combinators: boolean;
  readonly rules: readonly CelRule[];
  /** Some node at or below this one has CEL rules. */
  readonly rulesBelow: boolean;
  /** Its JSON differs from its CEL value (integers become int, property names are escaped). */
  readonly convert: boolean;
  /** CEL name of each property (k8s property name escaping); undefined when not addressable from CEL. */
  readonly celNames: ReadonlyMap<string, string | undefined>;
}

export function compileSchema(schema: JsonSchema, rules: RuleCompiler, path: string): SchemaNode {
  const properties = schema.properties
    ? new Map(Object.entries(schema.properties).map(([k, s]) => [k, compileSchema(s, rules, `${path}.${k}`)]))
    : undefined;
  const mapValues =
    typeof schema.additionalProperties === 'object'
      ? compileSchema(schema.additionalProperties, rules, `${path}[*]`)
      : undefined;
  const items = schema.items ? compileSchema(schema.items, rules, `${path}[*]`) : undefined;
  const sub = (list: readonly JsonSchema[] | undefined) =>
    (list ?? []).map((s) => compileSchema(withoutValidations(s), rules, path));
  const celRules = (schema['x-kubernetes-validations'] ?? []).map((r) => rules.compile(r, path));
  const children = [...(properties?.values() ?? []), mapValues, items].filter(
    (n): n is SchemaNode => n !== undefined,
  );
  const celNames = new Map([...(properties?.keys() ?? [])].map((k) => [k, escapeCelName(k)]));
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  const preserveUnknown = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const anyOf = sub(schema.anyOf);
  const oneOf = sub(schema.oneOf);
  const allOf = sub(schema.allOf);
  const not = schema.not ? compileSchema(schema.not, rules, path) : undefined;
  return {
    schema,
    type: intOrString ? '' : (schema.type ?? ''),
    properties,
    mapValues,
    items,
    preserveUnknown,
    pattern: schema.pattern === undefined ? undefined : compileRe2(schema.pattern),
    format: formatCheck(schema.format),
    enumValues: schema.enum ? new Set(schema.enum) : undefined,
    defaults: Object.entries(schema.properties ?? {}).flatMap(([k, s]) =>
      s.default === undefined ? [] : [[k, s.default] as const],
    ),
    anyOf,
    oneOf,
    allOf,
    not,
    combinators: anyOf.length + oneOf.length + allOf.length > 0 || not !== undefined,
    rules: celRules,
    rulesBelow: celRules.length > 0 || children.some((c) => c.rulesBelow),
    convert:
      schema.type === 'integer' ||
      intOrString ||
      preserveUnknown ||
      [...celNames].some(([k, v]) => k !== v) ||
      children.some((c) => c.convert),
    celNames,
  };
}

const CEL_RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** k8s.io/apiserver/pkg/cel: how a property name is spelled in CEL (`namespace` is `__namespace__`). */
export function escapeCelName(name: string): string | undefined {
  if (CEL_RESERVED.has(name)) return `__${name}__`;
  const escaped = name
    .replaceAll('__', '__underscores__')
    .replaceAll('.', '__dot__')
    .replaceAll('-', '__dash__')
    .replaceAll('/', '__slash__');
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(escaped) ? escaped : undefined;
}

/** The CEL value of a JSON value under its schema: int for integers, escaped property names. */
export function toCelValue(node: SchemaNode | undefined, value: unknown): unknown {
  if (node && !node.convert) return value;
  if (typeof value === 'number') {
    const asInt = node === undefined || node.type === 'integer' || node.type === '' || node.preserveUnknown;
    return asInt && Number.isInteger(value) ? BigInt(value) : value;
  }
  if (Array.isArray(value)) return value.map((v) => toCelValue(node?.items, v));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  const object = value as Record<string, unknown>;
  for (const k in object) {
    const v = object[k];
    const child = node?.properties?.get(k);
    if (child) {
      const name = node?.celNames.get(k);
      if (name !== undefined) out[name] = toCelValue(child, v);
    } else {
      out[k] = toCelValue(node?.mapValues, v);
    }
  }
  return out;
}

/** A schema of an allOf/anyOf/oneOf branch: its CEL rules belong to the parent, which compiles them once. */
function withoutValidations(schema: JsonSchema): JsonSchema {
  const { 'x-kubernetes-validations': _rules, ...rest } = schema;
  return rest;
}
