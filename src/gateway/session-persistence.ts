import type { SessionPersistenceConfig } from '../ir/session-persistence.ts';
import type { SessionPersistence } from '../snapshot/resources.ts';
import type { Problem } from './conditions.ts';
import { parseGatewayDuration } from './durations.ts';

export type SessionPersistenceResult =
  | { readonly ok: true; readonly value: SessionPersistenceConfig }
  | { readonly ok: false; readonly message: string };

/** RFC 6265 cookie-name and RFC 9110 field-name: both are HTTP tokens. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const MAX_NAME = 128;

/**
 * GEP-1619 `sessionPersistence` (a route rule's or an XBackendTrafficPolicy's) as the IR's session config.
 * `source` names the object it came from and is what the default session name is made from, so two rules never
 * share a cookie by accident (`sessionName` is implementation-specific when absent). Pure; the same checks as the
 * CRD's CEL rules, for objects that never met an API server (a folder of YAML).
 */
export function translateSessionPersistence(
  spec: SessionPersistence,
  field: string,
  source: string,
): SessionPersistenceResult {
  const type = spec.type ?? 'Cookie';
  if (type !== 'Cookie' && type !== 'Header')
    return { ok: false, message: `${field}.type ${String(type)} is not Cookie or Header` };
  const name = spec.sessionName ?? defaultSessionName(source);
  if (name.length > MAX_NAME || !TOKEN.test(name))
    return {
      ok: false,
      message: `${field}.sessionName ${JSON.stringify(name)} is not a cookie or header name`,
    };
  let absoluteTimeoutMs: number | undefined;
  if (spec.absoluteTimeout !== undefined) {
    absoluteTimeoutMs = parseGatewayDuration(spec.absoluteTimeout);
    if (absoluteTimeoutMs === undefined || absoluteTimeoutMs <= 0)
      return {
        ok: false,
        message: `${field}.absoluteTimeout ${spec.absoluteTimeout} is not a positive duration`,
      };
  }
  if (spec.cookieConfig !== undefined && type !== 'Cookie')
    return { ok: false, message: `${field}.cookieConfig can only be set with type Cookie` };
  const lifetime = spec.cookieConfig?.lifetimeType ?? 'Session';
  if (lifetime !== 'Session' && lifetime !== 'Permanent')
    return {
      ok: false,
      message: `${field}.cookieConfig.lifetimeType ${String(lifetime)} is not Permanent or Session`,
    };
  if (lifetime === 'Permanent' && absoluteTimeoutMs === undefined)
    return {
      ok: false,
      message: `${field}: absoluteTimeout must be specified when cookie lifetimeType is Permanent`,
    };
  return {
    ok: true,
    value: {
      type,
      name,
      ...(absoluteTimeoutMs !== undefined ? { absoluteTimeoutMs } : {}),
      lifetime,
      source,
    },
  };
}

/** `csgw-session-` and 8 hex digits of the source's FNV-1a hash: stable across restarts and replicas. */
export function defaultSessionName(source: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < source.length; i++) {
    hash ^= source.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return `csgw-session-${(hash >>> 0).toString(16).padStart(8, '0')}`;
}

/** `Kind/namespace/name/rule/<index>`: where a rule's session persistence came from (its default name too). */
export function routeSource(
  route: { readonly kind: string; readonly metadata: { readonly namespace?: string; readonly name: string } },
  index: number,
): string {
  return `${route.kind}/${route.metadata.namespace ?? 'default'}/${route.metadata.name}/rule/${index}`;
}

/** A rule's `sessionPersistence`: absent, the IR's config, or the problem that makes the rule invalid. */
export function ruleSessionPersistence(
  rule: { readonly sessionPersistence?: SessionPersistence },
  field: string,
  source: string,
):
  | { readonly value: SessionPersistenceConfig | undefined }
  | { readonly problem: Problem<'UnsupportedValue'> } {
  if (rule.sessionPersistence === undefined) return { value: undefined };
  const result = translateSessionPersistence(rule.sessionPersistence, `${field}.sessionPersistence`, source);
  return result.ok
    ? { value: result.value }
    : { problem: { reason: 'UnsupportedValue', message: result.message } };
}
