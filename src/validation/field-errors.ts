/**
 * Field-level validation errors worded as k8s.io/apimachinery/pkg/util/validation/field words them, so the
 * API test server and the file source say exactly what kube-apiserver would say.
 */

export type FieldErrorReason =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueTypeInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueForbidden'
  | 'InternalError';

/** One `details.causes[]` entry of a 422 Status: `field` is the path, `message` the error body. */
export interface FieldError {
  readonly reason: FieldErrorReason;
  readonly message: string;
  readonly field: string;
}

/** Go's %v of a JSON value, as field.Error prints a bad value (strings quoted, numbers bare). */
export function formatValue(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value);
}

export const fieldError = {
  required: (field: string, detail = ''): FieldError => ({
    reason: 'FieldValueRequired',
    message: detail ? `Required value: ${detail}` : 'Required value',
    field,
  }),
  invalid: (field: string, value: unknown, detail: string): FieldError => ({
    reason: 'FieldValueInvalid',
    message: `Invalid value: ${formatValue(value)}: ${detail}`,
    field,
  }),
  /** kube-openapi reports the actual JSON type as the bad value: `Invalid value: "string": ...`. */
  typeInvalid: (field: string, actualType: string, expected: string): FieldError => ({
    reason: 'FieldValueTypeInvalid',
    message: `Invalid value: "${actualType}": ${field || 'body'} in body must be of type ${expected}: "${actualType}"`,
    field,
  }),
  notSupported: (field: string, value: unknown, allowed: readonly unknown[]): FieldError => ({
    reason: 'FieldValueNotSupported',
    message: `Unsupported value: ${formatValue(value)}: supported values: ${allowed.map(formatValue).join(', ')}`,
    field,
  }),
  duplicate: (field: string, value: unknown): FieldError => ({
    reason: 'FieldValueDuplicate',
    message: `Duplicate value: ${formatDuplicate(value)}`,
    field,
  }),
  tooLong: (field: string, max: number): FieldError => ({
    reason: 'FieldValueTooLong',
    message: `Too long: may not be more than ${max} bytes`,
    field,
  }),
  tooMany: (field: string, actual: number, max: number): FieldError => ({
    reason: 'FieldValueTooMany',
    message: `Too many: ${actual}: must have at most ${max} items`,
    field,
  }),
  forbidden: (field: string, detail: string): FieldError => ({
    reason: 'FieldValueForbidden',
    message: `Forbidden: ${detail}`,
    field,
  }),
};

/** A list-map key is printed by Go as map[string]interface {}{"name":"http"}. */
function formatDuplicate(value: unknown): string {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `"${k}":${formatValue(v)}`)
      .join(', ');
    return `map[string]interface {}{${entries}}`;
  }
  return formatValue(value);
}

/** `spec.rules`: a schema property (field.Path.Child). */
export function childPath(parent: string, key: string): string {
  return parent ? `${parent}.${key}` : key;
}

/** `metadata.labels[app]`: a key of a map (field.Path.Key). */
export function keyPath(parent: string, key: string): string {
  return `${parent}[${key}]`;
}

export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}

/** The body of `X "name" is invalid: ...`: one error bare, several in brackets (utilerrors.Aggregate). */
export function summarize(errors: readonly FieldError[]): string {
  const parts = errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message));
  return parts.length === 1 ? (parts[0] as string) : `[${parts.join(', ')}]`;
}
