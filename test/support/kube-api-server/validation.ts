import { cause, type StatusCause } from './api-status.ts';
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
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** metav1.MicroTime is parsed with the layout RFC3339Micro: exactly six fractional digits. */
const RFC3339_MICRO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;
const CONDITION_REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const CONDITION_TYPE =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const CONTROLLER_NAME =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;
const SECTION_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
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

function requiredString(
  obj: JsonObject,
  key: string,
  field: string,
  causes: StatusCause[],
): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null || value === '') {
    causes.push(cause.required(field));
    return undefined;
  }
  if (typeof value !== 'string') {
    causes.push(cause.typeInvalid(field, value, 'string'));
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
  if (a === 127)
    return [cause.invalid(field, addr, 'may not be in the loopback range (127.0.0.0/8, ::1/128)')];
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
  if (addr === '::1')
    return [cause.invalid(field, addr, 'may not be in the loopback range (127.0.0.0/8, ::1/128)')];
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

// ---- CRDs: gateway.networking.k8s.io, multicluster.x-k8s.io, about.k8s.io ----

function requireSpec(obj: JsonObject, causes: StatusCause[]): JsonObject {
  const spec = object(obj, 'spec', 'spec', causes);
  if (!spec) causes.push(cause.required('spec'));
  return spec ?? {};
}

export function validateGatewayClass(obj: JsonObject, old?: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = requireSpec(obj, causes);
  const name = requiredString(spec, 'controllerName', 'spec.controllerName', causes);
  if (name !== undefined && !CONTROLLER_NAME.test(name)) {
    causes.push(
      cause.invalid(
        'spec.controllerName',
        name,
        `spec.controllerName in body should match '${CONTROLLER_NAME.source}'`,
      ),
    );
  }
  if (old && isObject(old.spec) && old.spec.controllerName !== spec.controllerName) {
    causes.push(cause.invalid('spec.controllerName', spec.controllerName, 'Value is immutable'));
  }
  causes.push(...validateStatusConditions(obj, 'status.conditions'));
  return causes;
}

export function validateGateway(obj: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = requireSpec(obj, causes);
  requiredString(spec, 'gatewayClassName', 'spec.gatewayClassName', causes);
  const listeners = array(spec, 'listeners', 'spec.listeners', causes);
  if (!listeners || listeners.length === 0) causes.push(cause.required('spec.listeners'));
  else if (listeners.length > 64) causes.push(cause.tooMany('spec.listeners', listeners.length, 64));
  const names = new Set<string>();
  (listeners ?? []).forEach((l, i) => {
    const field = `spec.listeners[${i}]`;
    if (!isObject(l)) {
      causes.push(cause.typeInvalid(field, l, 'object'));
      return;
    }
    const name = requiredString(l, 'name', `${field}.name`, causes);
    if (name !== undefined) {
      if (!SECTION_NAME.test(name))
        causes.push(cause.invalid(`${field}.name`, name, `should match '${SECTION_NAME.source}'`));
      if (names.has(name))
        causes.push(
          cause.invalid('spec.listeners', listeners, 'Listener name must be unique within the Gateway'),
        );
      names.add(name);
    }
    checkPort(`${field}.port`, l.port, causes);
    requiredString(l, 'protocol', `${field}.protocol`, causes);
  });
  const status = isObject(obj.status) ? obj.status : undefined;
  if (status) {
    causes.push(...validateStatusConditions(obj, 'status.conditions'));
    const statusListeners = array(status, 'listeners', 'status.listeners', causes) ?? [];
    statusListeners.forEach((l, i) => {
      const field = `status.listeners[${i}]`;
      if (!isObject(l)) return;
      requiredString(l, 'name', `${field}.name`, causes);
      if (!int(l.attachedRoutes)) causes.push(cause.required(`${field}.attachedRoutes`));
      if (!Array.isArray(l.supportedKinds)) causes.push(cause.required(`${field}.supportedKinds`));
      causes.push(...validateConditions(l.conditions, `${field}.conditions`, true));
    });
  }
  return causes;
}

export function validateHTTPRoute(obj: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = requireSpec(obj, causes);
  const parentRefs = array(spec, 'parentRefs', 'spec.parentRefs', causes) ?? [];
  if (parentRefs.length > 32) causes.push(cause.tooMany('spec.parentRefs', parentRefs.length, 32));
  parentRefs.forEach((ref, i) => {
    if (!isObject(ref)) causes.push(cause.typeInvalid(`spec.parentRefs[${i}]`, ref, 'object'));
    else requiredString(ref, 'name', `spec.parentRefs[${i}].name`, causes);
  });
  const hostnames = array(spec, 'hostnames', 'spec.hostnames', causes) ?? [];
  if (hostnames.length > 16) causes.push(cause.tooMany('spec.hostnames', hostnames.length, 16));
  const rules = array(spec, 'rules', 'spec.rules', causes) ?? [];
  if (rules.length > 16) causes.push(cause.tooMany('spec.rules', rules.length, 16));
  rules.forEach((rule, i) => {
    if (!isObject(rule)) return;
    const refs = array(rule, 'backendRefs', `spec.rules[${i}].backendRefs`, causes) ?? [];
    refs.forEach((ref, j) => {
      if (!isObject(ref)) return;
      requiredString(ref, 'name', `spec.rules[${i}].backendRefs[${j}].name`, causes);
      const kind = ref.kind ?? 'Service';
      const group = ref.group ?? '';
      if (kind === 'Service' && group === '' && ref.port === undefined) {
        causes.push(
          cause.invalid(`spec.rules[${i}].backendRefs[${j}]`, ref, 'Must have port for Service reference'),
        );
      }
    });
  });
  if (isObject(obj.status)) {
    const parents = array(obj.status, 'parents', 'status.parents', causes);
    if (!parents) causes.push(cause.required('status.parents'));
    else if (parents.length > 32) causes.push(cause.tooMany('status.parents', parents.length, 32));
    (parents ?? []).forEach((p, i) => {
      const field = `status.parents[${i}]`;
      if (!isObject(p)) return;
      const controllerName = requiredString(p, 'controllerName', `${field}.controllerName`, causes);
      if (controllerName !== undefined && !CONTROLLER_NAME.test(controllerName)) {
        causes.push(
          cause.invalid(`${field}.controllerName`, controllerName, 'should be a domain-prefixed path'),
        );
      }
      const parentRef = object(p, 'parentRef', `${field}.parentRef`, causes);
      if (!parentRef) causes.push(cause.required(`${field}.parentRef`));
      else requiredString(parentRef, 'name', `${field}.parentRef.name`, causes);
      causes.push(...validateConditions(p.conditions, `${field}.conditions`, true));
    });
  }
  return causes;
}

export function validateReferenceGrant(obj: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = requireSpec(obj, causes);
  for (const key of ['from', 'to'] as const) {
    const list = array(spec, key, `spec.${key}`, causes);
    if (!list || list.length === 0) causes.push(cause.required(`spec.${key}`));
    else if (list.length > 16) causes.push(cause.tooMany(`spec.${key}`, list.length, 16));
    (list ?? []).forEach((entry, i) => {
      const field = `spec.${key}[${i}]`;
      if (!isObject(entry)) return;
      if (typeof entry.group !== 'string') causes.push(cause.required(`${field}.group`));
      requiredString(entry, 'kind', `${field}.kind`, causes);
      if (key === 'from') requiredString(entry, 'namespace', `${field}.namespace`, causes);
    });
  }
  return causes;
}

const IMPORT_TYPES = ['ClusterSetIP', 'Headless'];

export function validateServiceImport(obj: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = requireSpec(obj, causes);
  const ports = array(spec, 'ports', 'spec.ports', causes);
  if (!ports) causes.push(cause.required('spec.ports'));
  (ports ?? []).forEach((port, i) => {
    if (isObject(port)) checkPort(`spec.ports[${i}].port`, port.port, causes);
  });
  if (spec.type === undefined) causes.push(cause.required('spec.type'));
  else if (typeof spec.type !== 'string' || !IMPORT_TYPES.includes(spec.type))
    causes.push(cause.notSupported('spec.type', spec.type, IMPORT_TYPES));
  const ips = array(spec, 'ips', 'spec.ips', causes) ?? [];
  if (ips.length > 2) causes.push(cause.tooMany('spec.ips', ips.length, 2));
  return causes;
}

export function validateClusterProperty(obj: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = requireSpec(obj, causes);
  if (typeof spec.value !== 'string') causes.push(cause.required('spec.value'));
  else if (spec.value.length > 128000)
    causes.push(cause.invalid('spec.value', '...', 'must be no more than 128000 characters'));
  return causes;
}

export function validateClusterProfile(obj: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = requireSpec(obj, causes);
  if (!isObject(spec.clusterManager)) causes.push(cause.required('spec.clusterManager'));
  return causes;
}

function validateStatusConditions(obj: JsonObject, field: string): StatusCause[] {
  if (!isObject(obj.status)) return [];
  return validateConditions(obj.status.conditions, field, false);
}

/** metav1.Condition as the Gateway API CRDs declare it: every field but observedGeneration is required. */
function validateConditions(value: unknown, field: string, required: boolean): StatusCause[] {
  if (value === undefined || value === null) return required ? [cause.required(field)] : [];
  if (!Array.isArray(value)) return [cause.typeInvalid(field, value, 'array')];
  const causes: StatusCause[] = [];
  if (value.length > 8) causes.push(cause.tooMany(field, value.length, 8));
  const types = new Set<string>();
  value.forEach((c, i) => {
    const f = `${field}[${i}]`;
    if (!isObject(c)) {
      causes.push(cause.typeInvalid(f, c, 'object'));
      return;
    }
    const type = requiredString(c, 'type', `${f}.type`, causes);
    if (type !== undefined) {
      if (!CONDITION_TYPE.test(type))
        causes.push(cause.invalid(`${f}.type`, type, 'should be a qualified name'));
      if (types.has(type)) causes.push(cause.duplicate(field, type));
      types.add(type);
    }
    if (!['True', 'False', 'Unknown'].includes(String(c.status)))
      causes.push(cause.notSupported(`${f}.status`, c.status, ['True', 'False', 'Unknown']));
    const reason = requiredString(c, 'reason', `${f}.reason`, causes);
    if (reason !== undefined && !CONDITION_REASON.test(reason))
      causes.push(cause.invalid(`${f}.reason`, reason, `should match '${CONDITION_REASON.source}'`));
    if (typeof c.message !== 'string') causes.push(cause.required(`${f}.message`));
    if (typeof c.lastTransitionTime !== 'string' || !RFC3339.test(c.lastTransitionTime)) {
      causes.push(cause.invalid(`${f}.lastTransitionTime`, c.lastTransitionTime, 'must be a date-time'));
    }
    if (c.observedGeneration !== undefined && (!int(c.observedGeneration) || c.observedGeneration < 0)) {
      causes.push(
        cause.invalid(
          `${f}.observedGeneration`,
          c.observedGeneration,
          'should be greater than or equal to 0',
        ),
      );
    }
  });
  return causes;
}

/** ListenerSet (gateway.networking.k8s.io/v1): a parentRef with a name, and 1 to 64 listeners. */
export function validateListenerSet(obj: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = requireSpec(obj, causes);
  const parentRef = spec.parentRef;
  if (!isObject(parentRef)) causes.push(cause.required('spec.parentRef'));
  else requiredString(parentRef, 'name', 'spec.parentRef.name', causes);
  const listeners = array(spec, 'listeners', 'spec.listeners', causes) ?? [];
  if (listeners.length === 0) causes.push(cause.required('spec.listeners'));
  if (listeners.length > 64) causes.push(cause.tooMany('spec.listeners', listeners.length, 64));
  return causes;
}
