import type { PathMatch, RouteMatch, StringMatch, WeightedBackend } from '../ir/route-table.ts';
import type { GRPCMethodMatch, GRPCRoute, GRPCRouteMatch, GRPCRouteRule } from '../snapshot/resources.ts';
import type { Problem } from './conditions.ts';
import { translateFilters } from './filters.ts';
import type { RouteContext } from './route-context.ts';
import {
  type RouteRulesResult,
  ruleBackends,
  type TranslatedRule,
  translateEachRule,
  weightedBackendOf,
} from './route-rules.ts';
import { ruleSessionPersistence } from './session-persistence.ts';

/** GRPCRouteSpec.rules as an API server would default it: absent means one rule matching every call. */
export function grpcRulesOf(route: GRPCRoute): readonly GRPCRouteRule[] {
  return route.spec?.rules ?? [{}];
}

/** GRPCRouteFilter types (a subset of HTTPRoute's); anything else makes the rule invalid. */
const GRPC_FILTERS = new Set([
  'RequestHeaderModifier',
  'ResponseHeaderModifier',
  'RequestMirror',
  'ExtensionRef',
]);

/** Service and method names as GRPCMethodMatch validates them for type Exact. */
const SERVICE_NAME = /^(?:[^./]+\.)*[^./]+$/;
const METHOD_NAME = /^[^/]+$/;

/**
 * Translates the rules of a GRPCRoute into the IR HTTPRoute rules use: a gRPC call is an HTTP/2 POST to
 * `/<service>/<method>`, so a method match is a path match (both: Exact; service only: PathPrefix; method only
 * or RegularExpression: an anchored regex). Each match carries its service and method for GRPCRoute precedence.
 */
export function translateGrpcRules(route: GRPCRoute, context: RouteContext): RouteRulesResult {
  return translateEachRule(route, grpcRulesOf(route), (rule, index, source) =>
    translateGrpcRule(rule, index, context, source),
  );
}

function translateGrpcRule(
  rule: GRPCRouteRule,
  index: number,
  context: RouteContext,
  source: string,
): TranslatedRule | { problem: Problem<'UnsupportedValue'> } {
  const field = `spec.rules[${index}]`;
  const session = ruleSessionPersistence(rule, field, source);
  if ('problem' in session) return session;
  const matches: RouteMatch[] = [];
  const specMatches = rule.matches && rule.matches.length > 0 ? rule.matches : [{}];
  for (const [m, match] of specMatches.entries()) {
    const result = grpcMatch(match, `${field}.matches[${m}]`);
    if ('problem' in result) return result;
    matches.push(result);
  }
  const badFilter = [
    ...(rule.filters ?? []),
    ...(rule.backendRefs ?? []).flatMap((b) => b.filters ?? []),
  ].find((f) => !GRPC_FILTERS.has(f.type));
  if (badFilter) return unsupported(`${field}: filter type ${badFilter.type} is not a GRPCRouteFilter`);
  const filters = translateFilters(rule.filters ?? [], `${field}.filters`, context);
  if (!filters.ok) return { problem: filters };

  const backends: WeightedBackend[] = [];
  for (const [b, ref] of (rule.backendRefs ?? []).entries()) {
    const at = `${field}.backendRefs[${b}]`;
    const backendFilters = translateFilters(ref.filters ?? [], `${at}.filters`, context);
    if (!backendFilters.ok) return { problem: backendFilters };
    // gRPC is HTTP/2: a backend whose port names no protocol is spoken to with h2c.
    const weighted = weightedBackendOf(ref, at, context, backendFilters, (backend) =>
      backend.protocol === 'h2c' ? backend : { ...backend, id: `${backend.id}#h2c`, protocol: 'h2c' },
    );
    if (weighted !== undefined) backends.push(weighted);
  }
  return {
    index,
    ...(rule.name !== undefined ? { name: rule.name } : {}),
    matches,
    action: {
      filters: filters.filters,
      backends: ruleBackends(filters, backends),
      ...(session.value ? { sessionPersistence: session.value } : {}),
    },
  };
}

function grpcMatch(
  match: GRPCRouteMatch,
  field: string,
): RouteMatch | { problem: Problem<'UnsupportedValue'> } {
  const method = methodPath(match.method, `${field}.method`);
  if ('problem' in method) return method;
  const seen = new Set<string>();
  const headers: StringMatch[] = [];
  for (const h of match.headers ?? []) {
    const name = h.name.toLowerCase();
    if (seen.has(name)) continue;
    seen.add(name);
    const kind = h.type ?? 'Exact';
    if (kind === 'RegularExpression' && !isValidRegex(h.value)) {
      return unsupported(
        `${field}.headers ${h.name}: ${JSON.stringify(h.value)} is not a valid regular expression`,
      );
    }
    headers.push({ kind, name, value: h.value });
  }
  return {
    path: method.path,
    headers,
    queryParams: [],
    grpc: {
      ...(method.service !== undefined ? { service: method.service } : {}),
      ...(method.method !== undefined ? { method: method.method } : {}),
    },
  };
}

interface MethodPath {
  readonly path: PathMatch;
  readonly service?: string;
  readonly method?: string;
}

function methodPath(
  match: GRPCMethodMatch | undefined,
  field: string,
): MethodPath | { problem: Problem<'UnsupportedValue'> } {
  if (match === undefined) return { path: { kind: 'PathPrefix', value: '/' } };
  const { service, method } = match;
  const type = match.type ?? 'Exact';
  if (service === undefined && method === undefined) {
    return unsupported(`${field}: one of service or method is required`);
  }
  const named = {
    ...(service !== undefined ? { service } : {}),
    ...(method !== undefined ? { method } : {}),
  };
  if (type === 'Exact') {
    if (service !== undefined && !SERVICE_NAME.test(service)) {
      return unsupported(`${field}.service ${JSON.stringify(service)} is not a valid gRPC service name`);
    }
    if (method !== undefined && !METHOD_NAME.test(method)) {
      return unsupported(`${field}.method ${JSON.stringify(method)} is not a valid gRPC method name`);
    }
    if (service !== undefined && method !== undefined) {
      return { path: { kind: 'Exact', value: `/${service}/${method}` }, ...named };
    }
    if (service !== undefined) return { path: { kind: 'PathPrefix', value: `/${service}` }, ...named };
    return { path: { kind: 'RegularExpression', value: `/[^/]+/${escapeRegex(method!)}` }, ...named };
  }
  if (type !== 'RegularExpression') return unsupported(`${field}.type ${String(type)} is not supported`);
  for (const [what, value] of [
    ['service', service],
    ['method', method],
  ] as const) {
    if (value !== undefined && !isValidRegex(value)) {
      return unsupported(`${field}.${what} ${JSON.stringify(value)} is not a valid regular expression`);
    }
  }
  return {
    path: { kind: 'RegularExpression', value: `/(?:${service ?? '[^/]+'})/(?:${method ?? '[^/]+'})` },
    ...named,
  };
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function isValidRegex(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}

function unsupported(message: string): { problem: Problem<'UnsupportedValue'> } {
  return { problem: { reason: 'UnsupportedValue', message } };
}
