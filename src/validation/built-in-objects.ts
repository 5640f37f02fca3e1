import { isRecord } from '../snapshot/json-object.ts';
import { type FieldError, fieldError } from './field-errors.ts';
import type { JsonObject } from './schema-types.ts';

/**
 * kube-apiserver's own validation of the built-in kinds the gateway reads (pkg/apis/core/validation,
 * pkg/apis/discovery/validation): what a Service, an EndpointSlice or a TLS Secret must be to be stored at all.
 * The API test server and the file source refuse with these same errors.
 */
export function builtInObjectErrors(kind: string, object: JsonObject, old?: JsonObject): FieldError[] {
  if (kind === 'Service') return serviceErrors(object);
  if (kind === 'EndpointSlice') return endpointSliceErrors(object, old);
  if (kind === 'Secret') return secretTypeErrors(object);
  return [];
}

const LOOPBACK_ENDPOINT = 'may not be in the loopback range (127.0.0.0/8, ::1/128)';

/**
 * The error kube-apiserver gives a loopback endpoint address. Waived where backends are processes on this
 * machine: the demo's simulated clusters and the file source.
 */
export function isLoopbackEndpointError(error: { readonly message: string }): boolean {
  return error.message.endsWith(LOOPBACK_ENDPOINT);
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SERVICE_TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const TRAFFIC_DISTRIBUTIONS = ['PreferClose', 'PreferSameZone', 'PreferSameNode'];
const ADDRESS_TYPES = ['IPv4', 'IPv6', 'FQDN'];

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function checkPort(field: string, value: unknown, errors: FieldError[], required = true): void {
  if (value === undefined) {
    if (required) errors.push(fieldError.required(field));
    return;
  }
  if (typeof value !== 'number' || !Number.isInteger(value))
    errors.push(fieldError.typeInvalid(field, jsonType(value), 'integer'));
  else if (value < 1 || value > 65535)
    errors.push(fieldError.invalid(field, value, 'must be between 1 and 65535, inclusive'));
}

function list(obj: JsonObject, key: string, field: string, errors: FieldError[]): unknown[] {
  const value = obj[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    errors.push(fieldError.typeInvalid(field, jsonType(value), 'array'));
    return [];
  }
  return value;
}

function serviceErrors(service: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const spec = isRecord(service.spec) ? service.spec : {};
  const type = spec.type ?? 'ClusterIP';
  if (typeof type !== 'string' || !SERVICE_TYPES.includes(type))
    errors.push(fieldError.notSupported('spec.type', type, SERVICE_TYPES));
  const ports = list(spec, 'ports', 'spec.ports', errors);
  const headless = spec.clusterIP === 'None';
  if (ports.length === 0 && type !== 'ExternalName' && !headless)
    errors.push(fieldError.required('spec.ports'));
  if (type === 'ExternalName' && !spec.externalName) errors.push(fieldError.required('spec.externalName'));
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const field = `spec.ports[${i}]`;
    if (!isRecord(port)) {
      errors.push(fieldError.typeInvalid(field, jsonType(port), 'object'));
      return;
    }
    checkPort(`${field}.port`, port.port, errors);
    const protocol = port.protocol ?? 'TCP';
    if (typeof protocol !== 'string' || !PROTOCOLS.includes(protocol))
      errors.push(fieldError.notSupported(`${field}.protocol`, protocol, PROTOCOLS));
    if (ports.length > 1 && (typeof port.name !== 'string' || port.name === ''))
      errors.push(fieldError.required(`${field}.name`));
    if (typeof port.name === 'string' && port.name !== '') {
      if (!DNS1123_LABEL.test(port.name))
        errors.push(fieldError.invalid(`${field}.name`, port.name, 'must be a DNS label'));
      if (names.has(port.name)) errors.push(fieldError.duplicate(`${field}.name`, port.name));
      names.add(port.name);
    }
    if (typeof port.targetPort === 'number') checkPort(`${field}.targetPort`, port.targetPort, errors);
  });
  const distribution = spec.trafficDistribution;
  if (
    distribution !== undefined &&
    distribution !== null &&
    (typeof distribution !== 'string' || !TRAFFIC_DISTRIBUTIONS.includes(distribution))
  )
    errors.push(fieldError.notSupported('spec.trafficDistribution', distribution, TRAFFIC_DISTRIBUTIONS));
  return errors;
}

/** A `kubernetes.io/tls` Secret must carry both keys (stringData is merged into data before this check). */
function secretTypeErrors(secret: JsonObject): FieldError[] {
  if (secret.type !== 'kubernetes.io/tls') return [];
  const keys = new Set([
    ...Object.keys(isRecord(secret.data) ? secret.data : {}),
    ...Object.keys(isRecord(secret.stringData) ? secret.stringData : {}),
  ]);
  return ['tls.crt', 'tls.key']
    .filter((key) => !keys.has(key))
    .map((key) => fieldError.required(`data[${key}]`));
}

function endpointSliceErrors(slice: JsonObject, old?: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const addressType = slice.addressType;
  if (addressType === undefined || addressType === '') errors.push(fieldError.required('addressType'));
  else if (typeof addressType !== 'string' || !ADDRESS_TYPES.includes(addressType))
    errors.push(fieldError.notSupported('addressType', addressType, ADDRESS_TYPES));
  if (old && old.addressType !== addressType)
    errors.push(fieldError.invalid('addressType', addressType, 'field is immutable'));
  const endpoints = list(slice, 'endpoints', 'endpoints', errors);
  if (endpoints.length > 1000) errors.push(fieldError.tooMany('endpoints', endpoints.length, 1000));
  endpoints.forEach((endpoint, i) => {
    const field = `endpoints[${i}]`;
    if (!isRecord(endpoint)) {
      errors.push(fieldError.typeInvalid(field, jsonType(endpoint), 'object'));
      return;
    }
    const addresses = list(endpoint, 'addresses', `${field}.addresses`, errors);
    if (addresses.length === 0)
      errors.push(fieldError.required(`${field}.addresses`, 'must contain at least 1 address'));
    if (addresses.length > 100) errors.push(fieldError.tooMany(`${field}.addresses`, addresses.length, 100));
    addresses.forEach((address, j) => {
      const at = `${field}.addresses[${j}]`;
      if (typeof address !== 'string') errors.push(fieldError.typeInvalid(at, jsonType(address), 'string'));
      else if (addressType === 'IPv4') errors.push(...endpointIPv4Errors(at, address));
      else if (addressType === 'IPv6') errors.push(...endpointIPv6Errors(at, address));
      else if (addressType === 'FQDN' && !DNS1123_SUBDOMAIN.test(address))
        errors.push(fieldError.invalid(at, address, 'must be a valid FQDN'));
    });
    if (
      endpoint.nodeName !== undefined &&
      (typeof endpoint.nodeName !== 'string' || !DNS1123_SUBDOMAIN.test(endpoint.nodeName))
    )
      errors.push(fieldError.invalid(`${field}.nodeName`, endpoint.nodeName, 'must be a DNS subdomain'));
  });
  const ports = list(slice, 'ports', 'ports', errors);
  if (ports.length > 20000) errors.push(fieldError.tooMany('ports', ports.length, 20000));
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const field = `ports[${i}]`;
    if (!isRecord(port)) {
      errors.push(fieldError.typeInvalid(field, jsonType(port), 'object'));
      return;
    }
    checkPort(`${field}.port`, port.port, errors, false);
    const name = typeof port.name === 'string' ? port.name : '';
    if (name !== '' && !DNS1123_LABEL.test(name))
      errors.push(fieldError.invalid(`${field}.name`, name, 'must be a DNS label'));
    if (names.has(name)) errors.push(fieldError.duplicate(`${field}.name`, name));
    names.add(name);
    if (port.protocol !== undefined && !PROTOCOLS.includes(String(port.protocol)))
      errors.push(fieldError.notSupported(`${field}.protocol`, port.protocol, PROTOCOLS));
  });
  return errors;
}

/**
 * ValidateEndpointIP (pkg/apis/core/validation): endpoints may not point at the unspecified, loopback,
 * link-local or link-local multicast ranges, whatever the client intended.
 */
function endpointIPv4Errors(field: string, address: string): FieldError[] {
  const parts = address.split('.');
  const octets = parts.map((p) => (/^(0|[1-9]\d{0,2})$/.test(p) ? Number(p) : Number.NaN));
  if (parts.length !== 4 || octets.some((o) => Number.isNaN(o) || o > 255))
    return [fieldError.invalid(field, address, 'must be a valid IPv4 address')];
  const [a, b, c] = octets as [number, number, number, number];
  if (octets.every((o) => o === 0))
    return [fieldError.invalid(field, address, 'may not be unspecified (0.0.0.0)')];
  if (a === 127) return [fieldError.invalid(field, address, LOOPBACK_ENDPOINT)];
  if (a === 169 && b === 254)
    return [
      fieldError.invalid(field, address, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'),
    ];
  if (a === 224 && b === 0 && c === 0)
    return [
      fieldError.invalid(
        field,
        address,
        'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)',
      ),
    ];
  return [];
}

function endpointIPv6Errors(field: string, address: string): FieldError[] {
  if (!/^[0-9a-f:]+$/.test(address) || !address.includes(':'))
    return [fieldError.invalid(field, address, 'must be a valid IPv6 address')];
  if (address === '::') return [fieldError.invalid(field, address, 'may not be unspecified (::)')];
  if (address === '::1') return [fieldError.invalid(field, address, LOOPBACK_ENDPOINT)];
  if (/^fe[89ab]/.test(address))
    return [
      fieldError.invalid(field, address, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'),
    ];
  if (address.startsWith('ff02:'))
    return [
      fieldError.invalid(
        field,
        address,
        'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)',
      ),
    ];
  return [];
}
