import { isRecord } from '../../snapshot/json-object.ts';
import { builtInObjectErrors, isLoopbackEndpointError } from '../../validation/built-in-objects.ts';
import { isBase64 } from '../../validation/formats.ts';
import { ApiFailure, cause, type StatusCause } from './api-status.ts';
import type { JsonObject } from './json.ts';

/**
 * The validation kube-apiserver applies to the resources the gateway reads and writes: built-in validation for
 * core and discovery types (k8s.io/kubernetes/pkg/apis/.../validation) and the OpenAPI schema + CEL rules of the
 * upstream CRDs for the rest. Only what a client of this project can plausibly send is covered, but everything
 * covered is rejected the way a real server rejects it.
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** metav1.MicroTime is parsed with the layout RFC3339Micro: exactly six fractional digits. */
const RFC3339_MICRO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;

export type NameRule = 'subdomain' | 'label' | 'dns1035';

export function validateName(name: unknown, rule: NameRule): StatusCause[] {
  if (typeof name !== 'string' || name === '')
    return [cause.required('metadata.name', 'name or generateName is required')];
  const [re, max, what] =
    rule === 'label'
      ? [
          DNS1123_LABEL,
          63,
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        ]
      : rule === 'dns1035'
        ? [
            DNS1035_LABEL,
            63,
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
          ]
        : [
            DNS1123_SUBDOMAIN,
            253,
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
          ];
  if (name.length > max)
    return [cause.invalid('metadata.name', name, `must be no more than ${max} characters`)];
  return re.test(name) ? [] : [cause.invalid('metadata.name', name, what)];
}

export function validateMetadata(meta: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const field of ['labels', 'annotations'] as const) {
    const map = meta[field];
    if (map === undefined || map === null) continue;
    if (!isRecord(map)) {
      causes.push(cause.typeInvalid(`metadata.${field}`, map, 'object'));
      continue;
    }
    for (const [key, value] of Object.entries(map)) {
      if (typeof value !== 'string')
        causes.push(cause.typeInvalid(`metadata.${field}.${key}`, value, 'string'));
      if (!validQualifiedName(key)) {
        causes.push(
          cause.invalid(
            `metadata.${field}`,
            key,
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
          ),
        );
      }
      if (
        field === 'labels' &&
        typeof value === 'string' &&
        (value.length > 63 || !LABEL_VALUE.test(value))
      ) {
        causes.push(
          cause.invalid(
            `metadata.labels`,
            value,
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
          ),
        );
      }
    }
  }
  return causes;
}

function validQualifiedName(key: string): boolean {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix))) return false;
  return name.length <= 63 && LABEL_NAME.test(name);
}

function int(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}

function object(obj: JsonObject, key: string, field: string, causes: StatusCause[]): JsonObject | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) {
    causes.push(cause.typeInvalid(field, value, 'object'));
    return undefined;
  }
  return value;
}

// ---- core/v1 ----

export function validateNamespace(_obj: JsonObject): StatusCause[] {
  return [];
}

export function validateService(obj: JsonObject): StatusCause[] {
  return builtInObjectErrors('Service', obj);
}

export function validateSecret(obj: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const data = object(obj, 'data', 'data', causes) ?? {};
  for (const [key, value] of Object.entries(data)) {
    if (!SECRET_KEY.test(key))
      causes.push(
        cause.invalid(
          `data[${key}]`,
          key,
          "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        ),
      );
    if (typeof value !== 'string' || !isBase64(value)) {
      causes.push(cause.invalid(`data[${key}]`, value, 'illegal base64 data'));
    }
  }
  if (obj.type === 'kubernetes.io/tls') {
    for (const key of ['tls.crt', 'tls.key']) if (!(key in data)) causes.push(cause.required(`data[${key}]`));
  }
  return causes;
}

export function validateEvent(obj: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const involved = object(obj, 'involvedObject', 'involvedObject', causes);
  if (!involved) causes.push(cause.required('involvedObject'));
  const meta = isRecord(obj.metadata) ? obj.metadata : {};
  if (involved && involved.namespace !== undefined && involved.namespace !== meta.namespace) {
    causes.push(
      cause.invalid('involvedObject.namespace', involved.namespace, 'does not match event.namespace'),
    );
  }
  if (obj.type !== undefined && obj.type !== 'Normal' && obj.type !== 'Warning') {
    causes.push(cause.notSupported('type', obj.type, ['Normal', 'Warning']));
  }
  if (!obj.reportingComponent && !obj.source) causes.push(cause.required('reportingController'));
  return causes;
}

// ---- discovery.k8s.io/v1 ----

export function validateEndpointSlice(obj: JsonObject, old?: JsonObject): StatusCause[] {
  return builtInObjectErrors('EndpointSlice', obj, old);
}

/** The cause kube-apiserver gives a loopback endpoint address; the demo's simulated clusters waive it. */
export const isLoopbackEndpointCause = isLoopbackEndpointError;

// ---- coordination.k8s.io/v1 ----

export function validateLease(obj: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = object(obj, 'spec', 'spec', causes) ?? {};
  for (const key of ['acquireTime', 'renewTime']) {
    const value = spec[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || !RFC3339_MICRO.test(value)) {
      causes.push(
        cause.invalid(`spec.${key}`, value, 'must be a metav1.MicroTime in RFC3339 with microseconds'),
      );
    }
  }
  const duration = spec.leaseDurationSeconds;
  if (duration !== undefined && duration !== null && (!int(duration) || duration <= 0)) {
    causes.push(cause.invalid('spec.leaseDurationSeconds', duration, 'must be greater than 0'));
  }
  const transitions = spec.leaseTransitions;
  if (transitions !== undefined && transitions !== null && (!int(transitions) || transitions < 0)) {
    causes.push(cause.invalid('spec.leaseTransitions', transitions, 'must be greater than or equal to 0'));
  }
  if (
    spec.holderIdentity !== undefined &&
    spec.holderIdentity !== null &&
    typeof spec.holderIdentity !== 'string'
  ) {
    causes.push(cause.typeInvalid('spec.holderIdentity', spec.holderIdentity, 'string'));
  }
  return causes;
}

// Custom resources (Gateway API, MCS, About, Cluster Inventory) are validated against their CRDs by
// crd-admission.ts, with the same validator the file source uses.

// ---- strict field validation (KEP-2885) ----

/** `?fieldValidation=`: what unknown and repeated fields cost; kube-apiserver's default is Warn (kubectl sends Strict). */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

const FIELD_VALIDATIONS: readonly FieldValidation[] = ['Ignore', 'Warn', 'Strict'];

/** The directive a request asks for; an unknown value is a 422 on the options object, as upstream validates it. */
export function fieldValidationOf(
  url: URL,
  options: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions',
): FieldValidation {
  const value = url.searchParams.get('fieldValidation');
  if (value === null || value === '') return 'Warn';
  if ((FIELD_VALIDATIONS as readonly string[]).includes(value)) return value as FieldValidation;
  throw new ApiFailure(
    422,
    'Invalid',
    `${options}.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "${value}": supported values: "Ignore", "Warn", "Strict"`,
    {
      group: 'meta.k8s.io',
      kind: options,
      causes: [cause.notSupported('fieldValidation', value, FIELD_VALIDATIONS)],
    },
  );
}

/**
 * The keys a JSON text repeats inside one object, by field path (`metadata.name`, `spec.ports[0].port`), in the
 * order they appear: what sigs.k8s.io/json's strict decoding reports as `duplicate field`. `text` must be JSON.
 */
export function duplicateJsonFields(text: string): string[] {
  const found: string[] = [];
  let i = 0;
  const skipSpace = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i++;
  };
  const readString = (): string => {
    let j = i + 1;
    while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
    const raw = text.slice(i, j + 1);
    i = j + 1;
    return JSON.parse(raw) as string;
  };
  const readValue = (path: string): void => {
    skipSpace();
    const c = text[i];
    if (c === '{') {
      i++;
      const seen = new Set<string>();
      for (;;) {
        skipSpace();
        if (text[i] === '}') break;
        if (text[i] === ',') {
          i++;
          continue;
        }
        const key = readString();
        skipSpace();
        i++; // ':'
        const child = path ? `${path}.${key}` : key;
        if (seen.has(key)) found.push(child);
        seen.add(key);
        readValue(child);
      }
      i++;
    } else if (c === '[') {
      i++;
      let index = 0;
      for (;;) {
        skipSpace();
        if (text[i] === ']') break;
        if (text[i] === ',') {
          i++;
          continue;
        }
        readValue(`${path}[${index++}]`);
      }
      i++;
    } else if (c === '"') readString();
    else while (i < text.length && !',}] \t\n\r'.includes(text[i] as string)) i++;
  };
  readValue('');
  return found;
}

/** Removes the fields at `paths` (field paths of properties and list indexes) from `obj`, in place. */
export function dropFields(obj: JsonObject, paths: readonly string[]): void {
  for (const path of paths) {
    const parts = path.match(/[^.[\]]+/g) ?? [];
    let node: unknown = obj;
    for (const part of parts.slice(0, -1))
      node = isRecord(node) || Array.isArray(node) ? (node as Record<string, unknown>)[part] : undefined;
    if (isRecord(node)) delete node[parts.at(-1) as string];
  }
}
