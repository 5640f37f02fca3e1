import type { ConfigWarning } from '../ir/config-warning.ts';
import { type BackendCluster, backendOwner, type ListenerGroup, type RouteTable } from '../ir/route-table.ts';
import type { SessionPersistenceConfig } from '../ir/session-persistence.ts';
import type { PolicyStatus, StatusUpdate } from '../ir/status.ts';
import { compareStrings } from '../snapshot/object-order.ts';
import type { Condition, XBackendTrafficPolicy } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { condition } from './conditions.ts';
import { GATEWAY_GROUP, namespaceOf } from './defaults.ts';
import { parseGatewayDuration } from './durations.ts';
import type { TranslateOptions } from './options.ts';
import { translateSessionPersistence } from './session-persistence.ts';

interface Result {
  readonly table: RouteTable;
  readonly statuses: readonly StatusUpdate[];
  readonly warnings?: readonly ConfigWarning[];
}

/** GEP-3388's defaults: 20 % of active requests, and 10 retries (per second in the GEP; concurrently here). */
const DEFAULT_PERCENT = 20;
const DEFAULT_MIN_RETRIES = 10;

type Verdict =
  | {
      readonly ok: true;
      readonly percent: number;
      readonly minConcurrency: number;
      readonly session: SessionPersistenceConfig | undefined;
      readonly message: string;
    }
  | {
      readonly ok: false;
      readonly reason: 'Invalid' | 'Conflicted' | 'TargetNotFound';
      readonly message: string;
    };

interface Candidate {
  readonly policy: XBackendTrafficPolicy;
  readonly key: string;
  /** `Kind/namespace/name` of each supported target. */
  readonly targets: readonly string[];
  verdict: Verdict;
}

/**
 * XBackendTrafficPolicy (Gateway API experimental, GEP-3388): its `retryConstraint` is the retry budget of the
 * Services and ServiceImports it targets, and its `sessionPersistence` (GEP-1619) their session persistence
 * (a route rule's own wins). Read as Envoy's retry budget, as Envoy Gateway and Istio map it:
 * `budget.percent` is the share of the backend's active requests that may be retries in flight, and
 * `minRetryRate.count` the retries allowed whatever that share gives (Envoy's min_retry_concurrency). Both
 * intervals are accepted and validated, but a concurrency budget has no interval, which the Accepted condition
 * says. The oldest policy (then `namespace/name`) wins a target; the others are Conflicted. A policy with no
 * target that exists is TargetNotFound. Status: one ancestor entry per Gateway that routes to a target.
 */
export function applyBackendTrafficPolicies<R extends Result>(
  result: R,
  snapshot: Snapshot,
  options: TranslateOptions,
): R {
  const policies = snapshot.list('XBackendTrafficPolicy');
  if (policies.length === 0) return result;
  const candidates: Candidate[] = [...policies]
    .sort(
      (a, b) =>
        compareStrings(a.metadata.creationTimestamp ?? '', b.metadata.creationTimestamp ?? '') ||
        compareStrings(keyOf(a), keyOf(b)),
    )
    .map((policy) => ({
      policy,
      key: keyOf(policy),
      targets: targetsOf(policy, options),
      verdict: validate(policy),
    }));
  const winners = new Map<string, Candidate>();
  for (const candidate of candidates) {
    if (!candidate.verdict.ok) continue;
    const existing = candidate.targets.filter((object) => targetExists(snapshot, object));
    if (existing.length === 0) {
      candidate.verdict = {
        ok: false,
        reason: 'TargetNotFound',
        message: 'no targetRef names a Service or ServiceImport that exists',
      };
      continue;
    }
    const taken = existing.find((object) => winners.has(object));
    if (taken !== undefined) {
      candidate.verdict = {
        ok: false,
        reason: 'Conflicted',
        message: `an older XBackendTrafficPolicy (${winners.get(taken)!.key}) targets ${taken}`,
      };
      continue;
    }
    for (const object of existing) winners.set(object, candidate);
  }
  if (winners.size === 0 && candidates.every((c) => c.targets.length === 0)) return result;

  const backends: Record<string, BackendCluster> = {};
  for (const [id, cluster] of Object.entries(result.table.backends)) {
    const winner = winners.get(backendOwner(cluster));
    const verdict = winner?.verdict;
    backends[id] =
      winner !== undefined && verdict?.ok === true
        ? {
            ...cluster,
            retryBudget: {
              percent: verdict.percent,
              minConcurrency: verdict.minConcurrency,
              policy: winner.key,
            },
            ...(verdict.session !== undefined ? { sessionPersistence: verdict.session } : {}),
          }
        : cluster;
  }
  const users = gatewaysByOwner(result.table);
  const warnings: ConfigWarning[] = [];
  const statuses = candidates.map((candidate): StatusUpdate => {
    const generation = candidate.policy.metadata.generation ?? 0;
    const gateways = new Set<string>();
    for (const target of candidate.targets)
      for (const gateway of users.get(target) ?? []) gateways.add(gateway);
    const conditions = conditionsOf(candidate.verdict, generation);
    // Refused with no Gateway to carry the condition (a missing target is warned of with the other policies').
    const verdict = candidate.verdict;
    if (!verdict.ok && verdict.reason !== 'TargetNotFound' && gateways.size === 0)
      warnings.push({
        code: 'NotAccepted',
        owner: `XBackendTrafficPolicy/${candidate.key}`,
        message: `XBackendTrafficPolicy ${candidate.key}: Accepted=False ${verdict.reason}: ${verdict.message}`,
      });
    const status: PolicyStatus = {
      ancestors: [...gateways].sort().map((gateway) => {
        const [namespace, name] = gateway.split('/') as [string, string];
        return {
          ancestorRef: { group: GATEWAY_GROUP, kind: 'Gateway', namespace, name },
          controllerName: options.controllerName,
          conditions,
        };
      }),
    };
    return {
      kind: 'XBackendTrafficPolicy',
      namespace: namespaceOf(candidate.policy),
      name: candidate.policy.metadata.name,
      generation,
      status,
    };
  });
  return {
    ...result,
    table: { ...result.table, backends },
    statuses: [...result.statuses, ...statuses],
    ...(warnings.length > 0 ? { warnings: [...(result.warnings ?? []), ...warnings] } : {}),
  };
}

function validate(policy: XBackendTrafficPolicy): Verdict {
  const constraint = policy.spec?.retryConstraint;
  const percent = constraint?.budget?.percent ?? DEFAULT_PERCENT;
  const count = constraint?.minRetryRate?.count ?? DEFAULT_MIN_RETRIES;
  if (!Number.isInteger(percent) || percent < 0 || percent > 100)
    return {
      ok: false,
      reason: 'Invalid',
      message: `retryConstraint.budget.percent ${percent} is not 0-100`,
    };
  if (!Number.isInteger(count) || count < 1 || count > 1_000_000)
    return {
      ok: false,
      reason: 'Invalid',
      message: `retryConstraint.minRetryRate.count ${count} is not 1-1000000`,
    };
  for (const [field, value] of [
    ['budget.interval', constraint?.budget?.interval],
    ['minRetryRate.interval', constraint?.minRetryRate?.interval],
  ] as const) {
    if (value !== undefined && parseGatewayDuration(value) === undefined)
      return { ok: false, reason: 'Invalid', message: `retryConstraint.${field} ${value} is not a duration` };
  }
  let session: SessionPersistenceConfig | undefined;
  if (policy.spec?.sessionPersistence !== undefined) {
    const translated = translateSessionPersistence(
      policy.spec.sessionPersistence,
      'sessionPersistence',
      `XBackendTrafficPolicy/${keyOf(policy)}`,
    );
    if (!translated.ok) return { ok: false, reason: 'Invalid', message: translated.message };
    session = translated.value;
  }
  const notes = [
    constraint === undefined
      ? 'no retryConstraint: the default budget of 20 % and 10 retries applies'
      : `retry budget: ${percent} % of active requests, at least ${count} retries in flight`,
    'intervals are not used (a concurrency budget, as Envoy)',
    ...(session !== undefined
      ? [`session persistence: ${session.type} ${session.name} (a route rule's own sessionPersistence wins)`]
      : []),
  ];
  return { ok: true, percent, minConcurrency: count, session, message: notes.join('; ') };
}

function conditionsOf(verdict: Verdict, generation: number): Condition[] {
  return verdict.ok
    ? [condition('Accepted', true, 'Accepted', verdict.message, generation)]
    : [condition('Accepted', false, verdict.reason, verdict.message, generation)];
}

/** `Kind/namespace/name` of each targetRef that names a Service or a ServiceImport (of a configured group). */
function targetsOf(policy: XBackendTrafficPolicy, options: TranslateOptions): string[] {
  const namespace = namespaceOf(policy);
  return (policy.spec?.targetRefs ?? []).flatMap((ref) => {
    const group = ref.group ?? '';
    const kind = ref.kind ?? 'Service';
    if (group === '' && kind === 'Service') return [`Service/${namespace}/${ref.name}`];
    if (options.serviceImportKinds.some((k) => k.group === group && k.kind === kind))
      return [`ServiceImport/${namespace}/${ref.name}`];
    return [];
  });
}

function targetExists(snapshot: Snapshot, object: string): boolean {
  const [kind, namespace, name] = object.split('/') as ['Service' | 'ServiceImport', string, string];
  return snapshot.get(kind, namespace, name) !== undefined;
}

/** A backend's owner (`Kind/namespace/name`) to the Gateways (`namespace/name`) whose listeners route to it. */
function gatewaysByOwner(table: RouteTable): Map<string, Set<string>> {
  const users = new Map<string, Set<string>>();
  const use = (id: string, gateway: string | undefined) => {
    const backend = table.backends[id];
    if (gateway === undefined || backend === undefined) return;
    const owner = backendOwner(backend);
    const set = users.get(owner) ?? new Set<string>();
    set.add(gateway);
    users.set(owner, set);
  };
  const walk = (group: ListenerGroup) => {
    for (const listener of group.listeners)
      for (const vhost of listener.virtualHosts)
        for (const entry of vhost.routes)
          for (const backend of entry.action.backends)
            if (backend.target.kind === 'Backend') use(backend.target.id, listener.gateway);
  };
  for (const port of table.ports) walk(port);
  for (const port of table.tlsPorts ?? [])
    for (const listener of port.listeners)
      for (const route of listener.routes)
        for (const backend of route.backends)
          if (backend.target.kind === 'Backend') use(backend.target.id, listener.gateway);
  return users;
}

function keyOf(policy: XBackendTrafficPolicy): string {
  return `${namespaceOf(policy)}/${policy.metadata.name}`;
}
