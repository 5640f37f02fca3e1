import { ApiFailure, cause, type StatusCause } from './api-status.ts';
import { isObject, type JsonObject } from './json.ts';

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
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
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
    if (!isObject(map)) {
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

function checkPort(field: string, value: unknown, causes: StatusCause[], required = true): void {
  if (value === undefined) {
    if (required) causes.push(cause.required(field));
    return;
  }
  if (!int(value)) causes.push(cause.typeInvalid(field, value, 'integer'));
  else if (value < 1 || value > 65535)
    causes.push(cause.invalid(field, value, 'must be between 1 and 65535, inclusive'));
}

function array(obj: JsonObject, key: string, field: string, causes: StatusCause[]): unknown[] | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    causes.push(cause.typeInvalid(field, value, 'array'));
    return undefined;
  }
  return value;
}

function object(obj: JsonObject, key: string, field: string, causes: StatusCause[]): JsonObject | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) {
    causes.push(cause.typeInvalid(field, value, 'object'));
    return undefined;
  }
  return value;
}

// ---- core/v1 ----

export function validateNamespace(_obj: JsonObject): StatusCause[] {
  return [];
}

const SERVICE_TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const TRAFFIC_DISTRIBUTIONS = ['PreferClose', 'PreferSameZone', 'PreferSameNode'];

export function validateService(obj: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = object(obj, 'spec', 'spec', causes) ?? {};
  const type = spec.type ?? 'ClusterIP';
  if (typeof type !== 'string' || !SERVICE_TYPES.includes(type))
    causes.push(cause.notSupported('spec.type', type, SERVICE_TYPES));
  const ports = array(spec, 'ports', 'spec.ports', causes) ?? [];
  const headless = spec.clusterIP === 'None';
  if (ports.length === 0 && type !== 'ExternalName' && !headless) causes.push(cause.required('spec.ports'));
  if (type === 'ExternalName' && !spec.externalName) causes.push(cause.required('spec.externalName'));
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const field = `spec.ports[${i}]`;
    if (!isObject(port)) {
      causes.push(cause.typeInvalid(field, port, 'object'));
      return;
    }
    checkPort(`${field}.port`, port.port, causes);
    const protocol = port.protocol ?? 'TCP';
    if (typeof protocol !== 'string' || !PROTOCOLS.includes(protocol))
      causes.push(cause.notSupported(`${field}.protocol`, protocol, PROTOCOLS));
    if (ports.length > 1 && (typeof port.name !== 'string' || port.name === ''))
      causes.push(cause.required(`${field}.name`));
    if (typeof port.name === 'string' && port.name !== '') {
      if (!DNS1123_LABEL.test(port.name))
        causes.push(cause.invalid(`${field}.name`, port.name, 'must be a DNS label'));
      if (names.has(port.name)) causes.push(cause.duplicate(`${field}.name`, port.name));
      names.add(port.name);
    }
    if (typeof port.targetPort === 'number') checkPort(`${field}.targetPort`, port.targetPort, causes);
  });
  const td = spec.trafficDistribution;
  if (td !== undefined && td !== null && (typeof td !== 'string' || !TRAFFIC_DISTRIBUTIONS.includes(td))) {
    causes.push(cause.notSupported('spec.trafficDistribution', td, TRAFFIC_DISTRIBUTIONS));
  }
  return causes;
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
    if (typeof value !== 'string' || !BASE64.test(value)) {
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
  const meta = isObject(obj.metadata) ? obj.metadata : {};
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

const ADDRESS_TYPES = ['IPv4', 'IPv6', 'FQDN'];

export function validateEndpointSlice(obj: JsonObject, old?: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const addressType = obj.addressType;
  if (addressType === undefined || addressType === '') causes.push(cause.required('addressType'));
  else if (typeof addressType !== 'string' || !ADDRESS_TYPES.includes(addressType))
    causes.push(cause.notSupported('addressType', addressType, ADDRESS_TYPES));
  if (old && old.addressType !== addressType)
    causes.push(cause.invalid('addressType', addressType, 'field is immutable'));
  const endpoints = array(obj, 'endpoints', 'endpoints', causes) ?? [];
  if (endpoints.length > 1000) causes.push(cause.tooMany('endpoints', endpoints.length, 1000));
  endpoints.forEach((ep, i) => {
    const field = `endpoints[${i}]`;
    if (!isObject(ep)) {
      causes.push(cause.typeInvalid(field, ep, 'object'));
      return;
    }
    const addresses = array(ep, 'addresses', `${field}.addresses`, causes) ?? [];
    if (addresses.length === 0)
      causes.push(cause.required(`${field}.addresses`, 'must contain at least 1 address'));
    if (addresses.length > 100) causes.push(cause.tooMany(`${field}.addresses`, addresses.length, 100));
    addresses.forEach((addr, j) => {
      const af = `${field}.addresses[${j}]`;
      if (typeof addr !== 'string') causes.push(cause.typeInvalid(af, addr, 'string'));
      else if (addressType === 'IPv4') causes.push(...validateEndpointIPv4(af, addr));
      else if (addressType === 'IPv6') causes.push(...validateEndpointIPv6(af, addr));
      else if (addressType === 'FQDN' && !DNS1123_SUBDOMAIN.test(addr))
        causes.push(cause.invalid(af, addr, 'must be a valid FQDN'));
    });
    if (
      ep.nodeName !== undefined &&
      (typeof ep.nodeName !== 'string' || !DNS1123_SUBDOMAIN.test(ep.nodeName))
    ) {
      causes.push(cause.invalid(`${field}.nodeName`, ep.nodeName, 'must be a DNS subdomain'));
    }
  });
  const ports = array(obj, 'ports', 'ports', causes) ?? [];
  if (ports.length > 20000) causes.push(cause.tooMany('ports', ports.length, 20000));
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const field = `ports[${i}]`;
    if (!isObject(port)) {
      causes.push(cause.typeInvalid(field, port, 'object'));
      return;
    }
    checkPort(`${field}.port`, port.port, causes, false);
    const name = typeof port.name === 'string' ? port.name : '';
    if (name !== '' && !DNS1123_LABEL.test(name))
      causes.push(cause.invalid(`${field}.name`, name, 'must be a DNS label'));
    if (names.has(name)) causes.push(cause.duplicate(`${field}.name`, name));
    names.add(name);
    if (port.protocol !== undefined && !PROTOCOLS.includes(String(port.protocol)))
      causes.push(cause.notSupported(`${field}.protocol`, port.protocol, PROTOCOLS));
  });
  return causes;
}

const LOOPBACK_ENDPOINT = 'may not be in the loopback range (127.0.0.0/8, ::1/128)';

/** The cause kube-apiserver gives a loopback endpoint address; the demo's simulated clusters waive it. */
export function isLoopbackEndpointCause(c: StatusCause): boolean {
  return c.message.endsWith(LOOPBACK_ENDPOINT);
}

/**
 * ValidateEndpointIP (pkg/apis/core/validation): endpoints may not point at the unspecified, loopback,
 * link-local or link-local multicast ranges, whatever the client intended.
 */
function validateEndpointIPv4(field: string, addr: string): StatusCause[] {
  const parts = addr.split('.');
  const octets = parts.map((p) => (/^(0|[1-9]\d{0,2})$/.test(p) ? Number(p) : Number.NaN));
  if (parts.length !== 4 || octets.some((o) => Number.isNaN(o) || o > 255)) {
    return [cause.invalid(field, addr, 'must be a valid IPv4 address')];
  }
  const [a, b, c] = octets as [number, number, number, number];
  if (octets.every((o) => o === 0)) return [cause.invalid(field, addr, 'may not be unspecified (0.0.0.0)')];
  if (a === 127) return [cause.invalid(field, addr, LOOPBACK_ENDPOINT)];
  if (a === 169 && b === 254)
    return [cause.invalid(field, addr, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)')];
  if (a === 224 && b === 0 && c === 0)
    return [
      cause.invalid(field, addr, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'),
    ];
  return [];
}

function validateEndpointIPv6(field: string, addr: string): StatusCause[] {
  if (!/^[0-9a-f:]+$/.test(addr) || !addr.includes(':'))
    return [cause.invalid(field, addr, 'must be a valid IPv6 address')];
  if (addr === '::') return [cause.invalid(field, addr, 'may not be unspecified (::)')];
  if (addr === '::1') return [cause.invalid(field, addr, LOOPBACK_ENDPOINT)];
  if (/^fe[89ab]/.test(addr))
    return [cause.invalid(field, addr, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)')];
  if (addr.startsWith('ff02:'))
    return [
      cause.invalid(field, addr, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'),
    ];
  return [];
}

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
      node = isObject(node) || Array.isArray(node) ? (node as Record<string, unknown>)[part] : undefined;
    if (isObject(node)) delete node[parts.at(-1) as string];
  }
}
