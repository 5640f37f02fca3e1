import type { HttpFilter } from '../ir/http-filters.ts';
import type { BackendCluster, RouteAction, RouteMatch, WeightedBackend } from '../ir/route-table.ts';
import type { BackendObjectReference, HTTPRoute, HTTPRouteRule } from '../snapshot/resources.ts';
import { resolveBackendRef } from './backend-refs.ts';
import type { Problem } from './conditions.ts';
import { parseGatewayDuration } from './durations.ts';
import { translateFilters } from './filters.ts';
import { DEFAULT_MATCHES, normalizeMatch } from './matches.ts';
import type { RouteContext } from './route-context.ts';
import { routeSource, ruleSessionPersistence } from './session-persistence.ts';

export interface TranslatedRule {
  readonly index: number;
  readonly name?: string;
  readonly matches: readonly RouteMatch[];
  readonly action: RouteAction;
}

export interface InvalidRule {
  readonly index: number;
  readonly problem: Problem<'UnsupportedValue'>;
}

export interface RouteRulesResult {
  readonly rules: readonly TranslatedRule[];
  /** Rules left out of the table (HTTPRoute PartiallyInvalid, or Accepted=False when no rule is left). */
  readonly invalid: readonly InvalidRule[];
}

/**
 * HTTPRouteSpec.rules as an API server would default it: absent means one rule matching PathPrefix "/"
 * (with no backendRefs, so it answers 500).
 */
export function rulesOf(route: HTTPRoute): readonly HTTPRouteRule[] {
  return route.spec?.rules ?? [{}];
}

/** Translates every rule of an HTTPRoute; unresolved references are collected in the context. */
export function translateRules(route: HTTPRoute, context: RouteContext): RouteRulesResult {
  return translateEachRule(route, rulesOf(route), (rule, index, source) =>
    translateRule(rule, index, context, source),
  );
}

type RuleOutcome = TranslatedRule | { readonly problem: Problem<'UnsupportedValue'> };

/** Every rule of a route translated; a rule with a problem is left out and listed (PartiallyInvalid). */
export function translateEachRule<Rule>(
  route: Parameters<typeof routeSource>[0],
  specRules: readonly Rule[],
  translate: (rule: Rule, index: number, source: string) => RuleOutcome,
): RouteRulesResult {
  const rules: TranslatedRule[] = [];
  const invalid: InvalidRule[] = [];
  for (const [index, rule] of specRules.entries()) {
    const result = translate(rule, index, routeSource(route, index));
    if ('problem' in result) invalid.push({ index, problem: result.problem });
    else rules.push(result);
  }
  return { rules, invalid };
}

/**
 * One backendRef of a rule: resolved into the context (its backend, warnings, or why it does not resolve), and
 * its weighted entry, undefined at weight 0 (which takes no traffic but is still validated: ResolvedRefs covers
 * every ref). `backend` adapts a resolved backend to the route kind (gRPC speaks h2c).
 */
export function weightedBackendOf(
  ref: BackendObjectReference & { readonly weight?: number },
  at: string,
  context: RouteContext,
  filters: { readonly filters: readonly HttpFilter[]; readonly failClosed: boolean },
  backend: (resolved: BackendCluster) => BackendCluster = (resolved) => resolved,
): WeightedBackend | undefined {
  const weight = ref.weight ?? 1;
  const resolved = resolveBackendRef(ref, at, context);
  let id: string | undefined;
  if (resolved.ok) {
    const cluster = backend(resolved.backend);
    context.backends.set(cluster.id, cluster);
    context.warnings.push(...resolved.warnings);
    id = cluster.id;
  } else {
    context.refProblems.push({ reason: resolved.reason, message: resolved.message });
  }
  if (weight <= 0) return undefined;
  if (id === undefined || filters.failClosed)
    return {
      weight,
      target: { kind: 'Invalid', reason: resolved.ok ? 'InvalidKind' : resolved.reason },
      filters: [],
    };
  return { weight, target: { kind: 'Backend', id }, filters: filters.filters };
}

/** A rule's backends, or, when a rule filter cannot run (an ExtensionRef), one that answers 500: never skipped. */
export function ruleBackends(
  filters: { readonly failClosed: boolean },
  backends: readonly WeightedBackend[],
): readonly WeightedBackend[] {
  return filters.failClosed
    ? [{ weight: 1, target: { kind: 'Invalid', reason: 'InvalidKind' }, filters: [] }]
    : backends;
}

function translateRule(
  rule: HTTPRouteRule,
  index: number,
  context: RouteContext,
  source: string,
): TranslatedRule | { problem: Problem<'UnsupportedValue'> } {
  const field = `spec.rules[${index}]`;
  const matches: RouteMatch[] = [];
  const specMatches = rule.matches && rule.matches.length > 0 ? rule.matches : DEFAULT_MATCHES;
  for (const [m, match] of specMatches.entries()) {
    const result = normalizeMatch(match, `${field}.matches[${m}]`);
    if (!result.ok) return { problem: result };
    matches.push(result.match);
  }
  const filters = translateFilters(rule.filters ?? [], `${field}.filters`, context);
  if (!filters.ok) return { problem: filters };
  const prefixProblem = replacePrefixProblem(filters.filters, matches, field);
  if (prefixProblem) return { problem: prefixProblem };

  const backends: WeightedBackend[] = [];
  for (const [b, ref] of (rule.backendRefs ?? []).entries()) {
    const at = `${field}.backendRefs[${b}]`;
    const backendFilters = translateFilters(ref.filters ?? [], `${at}.filters`, context);
    if (!backendFilters.ok) return { problem: backendFilters };
    const backendPrefixProblem = replacePrefixProblem(backendFilters.filters, matches, at);
    if (backendPrefixProblem) return { problem: backendPrefixProblem };
    const weighted = weightedBackendOf(ref, at, context, backendFilters);
    if (weighted !== undefined) backends.push(weighted);
  }

  const timeouts = translateTimeouts(rule, field);
  if ('problem' in timeouts) return timeouts;
  const retry = translateRetry(rule, field);
  if ('problem' in retry) return retry;
  const session = ruleSessionPersistence(rule, field, source);
  if ('problem' in session) return session;
  const action: RouteAction = {
    filters: filters.filters,
    backends: ruleBackends(filters, backends),
    ...(timeouts.value ? { timeouts: timeouts.value } : {}),
    ...(retry.value ? { retry: retry.value } : {}),
    ...(session.value ? { sessionPersistence: session.value } : {}),
  };
  return { index, ...(rule.name !== undefined ? { name: rule.name } : {}), matches, action };
}

/** ReplacePrefixMatch needs a PathPrefix match to replace (HTTPPathModifier docs). */
function replacePrefixProblem(
  filters: readonly HttpFilter[],
  matches: readonly RouteMatch[],
  field: string,
): Problem<'UnsupportedValue'> | undefined {
  const usesPrefix = filters.some(
    (f) => (f.kind === 'URLRewrite' || f.kind === 'RequestRedirect') && f.path?.kind === 'ReplacePrefixMatch',
  );
  if (!usesPrefix || matches.every((m) => m.path.kind === 'PathPrefix')) return undefined;
  return {
    reason: 'UnsupportedValue',
    message: `${field}: ReplacePrefixMatch requires every match to be of path type PathPrefix`,
  };
}

type TimeoutsResult =
  | { readonly value: RouteAction['timeouts'] | undefined }
  | { readonly problem: Problem<'UnsupportedValue'> };

/** HTTPRouteTimeouts: Gateway API durations; "0s" disables the timeout, so it is left out of the IR. */
function translateTimeouts(rule: HTTPRouteRule, field: string): TimeoutsResult {
  const out: { requestMs?: number; backendRequestMs?: number } = {};
  for (const [key, irKey] of [
    ['request', 'requestMs'],
    ['backendRequest', 'backendRequestMs'],
  ] as const) {
    const text = rule.timeouts?.[key];
    if (text === undefined) continue;
    const ms = parseGatewayDuration(text);
    if (ms === undefined) {
      return {
        problem: {
          reason: 'UnsupportedValue',
          message: `${field}.timeouts.${key} ${text} is not a valid duration`,
        },
      };
    }
    if (ms > 0) out[irKey] = ms;
  }
  return { value: Object.keys(out).length > 0 ? out : undefined };
}

function translateRetry(
  rule: HTTPRouteRule,
  field: string,
): { readonly value: RouteAction['retry'] | undefined } | { readonly problem: Problem<'UnsupportedValue'> } {
  const retry = rule.retry;
  if (!retry) return { value: undefined };
  let backoffMs: number | undefined;
  if (retry.backoff !== undefined) {
    backoffMs = parseGatewayDuration(retry.backoff);
    if (backoffMs === undefined) {
      return {
        problem: {
          reason: 'UnsupportedValue',
          message: `${field}.retry.backoff ${retry.backoff} is not a valid duration`,
        },
      };
    }
  }
  return {
    value: {
      // HTTPRouteRetry leaves the defaults to the implementation: one retry, on the listed codes only.
      attempts: retry.attempts ?? 1,
      codes: retry.codes ?? [],
      ...(backoffMs !== undefined ? { backoffMs } : {}),
    },
  };
}
