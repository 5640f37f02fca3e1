import type {
  ClusterSelectionPolicyStatus,
  GatewayClassStatus,
  GatewayStatus,
  HTTPRouteStatus,
  ListenerSetStatus,
  PolicyStatus,
  RouteParentStatus,
  StatusUpdate,
} from '../ir/status.ts';
import { isRecord } from '../snapshot/json-object.ts';
import type { Condition } from '../snapshot/resources.ts';

type Json = Record<string, unknown>;

/** metav1.Time has second precision on the wire. */
export function formatTime(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * Conditions as the API conventions want them: `lastTransitionTime` moves only when `status` changes
 * (https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md#typical-status-properties),
 * and every condition carries the generation it was computed from.
 */
export function mergeConditions(
  desired: readonly Condition[],
  existing: unknown,
  generation: number,
  now: string,
): Json[] {
  const previous = Array.isArray(existing) ? existing.filter(isRecord) : [];
  return desired.map((c) => {
    const old = previous.find((p) => p.type === c.type);
    const keep = old && old.status === c.status && typeof old.lastTransitionTime === 'string';
    return {
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      observedGeneration: c.observedGeneration ?? generation,
      lastTransitionTime: keep ? (old.lastTransitionTime as string) : now,
    };
  });
}

function parentRefKey(ref: unknown): string {
  if (!isRecord(ref)) return '';
  return JSON.stringify([
    ref.group ?? 'gateway.networking.k8s.io',
    ref.kind ?? 'Gateway',
    ref.namespace ?? '',
    ref.name ?? '',
    ref.sectionName ?? '',
    ref.port ?? '',
  ]);
}

function cleanParentRef(ref: RouteParentStatus['parentRef']): Json {
  const out: Json = { group: ref.group, kind: ref.kind, name: ref.name };
  if (ref.namespace !== undefined) out.namespace = ref.namespace;
  if (ref.sectionName !== undefined) out.sectionName = ref.sectionName;
  if (ref.port !== undefined) out.port = ref.port;
  return out;
}

/**
 * The full status the object should have after this update. Fields this controller does not own are kept:
 * for HTTPRoute, `parents` entries of other controllers stay where they are (Gateway API: "each controller
 * owns the entries it wrote"); ours are replaced.
 */
export function desiredStatus(
  update: StatusUpdate,
  current: unknown,
  controllerName: string,
  now: string,
): Json {
  const base: Json = isRecord(current) ? { ...current } : {};
  const generation = update.generation;
  switch (update.kind) {
    case 'GatewayClass': {
      const status = update.status as GatewayClassStatus;
      const out: Json = {
        ...base,
        conditions: mergeConditions(status.conditions, base.conditions, generation, now),
      };
      if (status.supportedFeatures !== undefined) {
        out.supportedFeatures = status.supportedFeatures.map((f) => ({ name: f.name }));
      }
      return out;
    }
    case 'Gateway': {
      const status = update.status as GatewayStatus;
      return {
        ...base,
        addresses: status.addresses.map((a) => ({ type: a.type, value: a.value })),
        ...(status.attachedListenerSets !== undefined
          ? { attachedListenerSets: status.attachedListenerSets }
          : {}),
        conditions: mergeConditions(status.conditions, base.conditions, generation, now),
        listeners: mergeListeners(status.listeners, base, generation, now),
      };
    }
    case 'BackendTLSPolicy':
    case 'XBackendTrafficPolicy': {
      const status = update.status as PolicyStatus;
      const old = Array.isArray(base.ancestors) ? base.ancestors.filter(isRecord) : [];
      const ancestors: Json[] = old.filter((a) => a.controllerName !== controllerName);
      for (const a of status.ancestors) {
        const key = parentRefKey(a.ancestorRef);
        const before = old.find(
          (o) => o.controllerName === controllerName && parentRefKey(o.ancestorRef) === key,
        );
        ancestors.push({
          ancestorRef: { ...a.ancestorRef },
          controllerName,
          conditions: mergeConditions(a.conditions, before?.conditions, generation, now),
        });
      }
      return { ...base, ancestors };
    }
    case 'ListenerSet':
      return listenerSetStatus(update, base, generation, now);
    case 'ClusterSelectionPolicy': {
      const status = update.status as ClusterSelectionPolicyStatus;
      return {
        ...base,
        conditions: mergeConditions(status.conditions, base.conditions, generation, now),
        tiers: status.tiers.map((tier) => ({ name: tier.name, clusters: [...tier.clusters] })),
        clustersWithoutProperties: status.clustersWithoutProperties.map((c) => ({
          cluster: c.cluster,
          missing: [...c.missing],
        })),
      };
    }
    case 'TLSRoute':
    case 'TCPRoute':
    case 'UDPRoute':
    case 'HTTPRoute':
    case 'GRPCRoute': {
      const status = update.status as HTTPRouteStatus;
      const oldParents = Array.isArray(base.parents) ? base.parents.filter(isRecord) : [];
      const ours = oldParents.filter((p) => p.controllerName === controllerName);
      const parents: Json[] = oldParents.filter((p) => p.controllerName !== controllerName);
      for (const p of status.parents) {
        const key = parentRefKey(p.parentRef);
        const old = ours.find((o) => parentRefKey(o.parentRef) === key);
        parents.push({
          parentRef: cleanParentRef(p.parentRef),
          controllerName,
          conditions: mergeConditions(p.conditions, old?.conditions, generation, now),
        });
      }
      return { ...base, parents };
    }
  }
}

/** Listener statuses of a Gateway or ListenerSet, each listener's conditions merged with its old ones by name. */
function mergeListeners(
  listeners: GatewayStatus['listeners'],
  base: Json,
  generation: number,
  now: string,
): Json[] {
  const oldListeners = Array.isArray(base.listeners) ? base.listeners.filter(isRecord) : [];
  return listeners.map((l) => ({
    name: l.name,
    supportedKinds: l.supportedKinds.map((k) => ({ group: k.group, kind: k.kind })),
    attachedRoutes: l.attachedRoutes,
    conditions: mergeConditions(
      l.conditions,
      oldListeners.find((o) => o.name === l.name)?.conditions,
      generation,
      now,
    ),
  }));
}

/** ListenerSet status: its conditions and listeners, like a Gateway's (it has no addresses). */
function listenerSetStatus(update: StatusUpdate, base: Json, generation: number, now: string): Json {
  const status = update.status as ListenerSetStatus;
  return {
    ...base,
    conditions: mergeConditions(status.conditions, base.conditions, generation, now),
    listeners: mergeListeners(status.listeners, base, generation, now),
  };
}

/** Condition types where `False` is a problem worth an Event, and the negative-polarity ones where `True` is. */
const POSITIVE = new Set(['Accepted', 'Programmed', 'ResolvedRefs']);
const NEGATIVE = new Set(['Conflicted']);

export interface ProblemTransition {
  readonly reason: string;
  readonly message: string;
}

function isProblem(c: Json): boolean {
  return (
    (POSITIVE.has(String(c.type)) && c.status === 'False') ||
    (NEGATIVE.has(String(c.type)) && c.status === 'True')
  );
}

function transitions(where: string, next: unknown, previous: unknown, out: ProblemTransition[]): void {
  const old = Array.isArray(previous) ? previous.filter(isRecord) : [];
  for (const c of Array.isArray(next) ? next.filter(isRecord) : []) {
    if (!isProblem(c)) continue;
    const before = old.find((o) => o.type === c.type);
    if (before && isProblem(before)) continue;
    const text = `${where}${String(c.type)}=${String(c.status)}`;
    out.push({ reason: String(c.reason), message: c.message ? `${text}: ${String(c.message)}` : text });
  }
}

/** Conditions that have just turned bad (for Warning Events): only edges, so a steady problem is reported once. */
export function problemTransitions(
  next: Json,
  current: unknown,
  controllerName: string,
): ProblemTransition[] {
  const out: ProblemTransition[] = [];
  const old: Json = isRecord(current) ? current : {};
  transitions('', next.conditions, old.conditions, out);
  const oldListeners = Array.isArray(old.listeners) ? old.listeners.filter(isRecord) : [];
  for (const l of Array.isArray(next.listeners) ? next.listeners.filter(isRecord) : []) {
    transitions(
      `listener ${String(l.name)}: `,
      l.conditions,
      oldListeners.find((o) => o.name === l.name)?.conditions,
      out,
    );
  }
  const oldParents = Array.isArray(old.parents) ? old.parents.filter(isRecord) : [];
  for (const p of Array.isArray(next.parents) ? next.parents.filter(isRecord) : []) {
    if (p.controllerName !== controllerName) continue;
    const key = parentRefKey(p.parentRef);
    const before = oldParents.find(
      (o) => o.controllerName === controllerName && parentRefKey(o.parentRef) === key,
    );
    const name = isRecord(p.parentRef) ? String(p.parentRef.name) : '?';
    transitions(`parent ${name}: `, p.conditions, before?.conditions, out);
  }
  return out;
}
