import { compareCreation, compareStrings } from '../snapshot/object-order.ts';
import type { Gateway, ListenerSet } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import type { Problem } from './conditions.ts';
import { GATEWAY_GROUP, keyOf, namespaceOf } from './defaults.ts';
import { matchesLabelSelector, namespaceLabels } from './label-selector.ts';
import { type ListenerState, transportOf, validateListener } from './listeners.ts';

export type ListenerSetProblem = Problem<'NotAllowed' | 'ParentNotAccepted'>;

/** A ListenerSet whose parentRef names one of our Gateways, with its listeners validated and merged. */
export interface AttachedListenerSet {
  readonly listenerSet: ListenerSet;
  /** `namespace/name` of the ListenerSet. */
  readonly key: string;
  readonly gatewayKey: string;
  /** Set when the Gateway does not take it (allowedListeners) or is itself not accepted; then no listeners. */
  readonly problem: ListenerSetProblem | undefined;
  readonly listeners: readonly ListenerState[];
}

interface ParentGateway {
  readonly gateway: Gateway;
  readonly listeners: readonly ListenerState[];
  readonly accepted: boolean;
}

/**
 * ListenerSets (GEP-1713) of our Gateways. A Gateway takes a ListenerSet when `spec.allowedListeners`
 * admits its namespace (default None). Its listeners are merged after the Gateway's own, ListenerSets ordered
 * oldest first, then by `namespace/name`; a listener that conflicts with one merged before it (same port and
 * another protocol, or same port, protocol and hostname) loses: Conflicted, and not accepted.
 */
export function attachListenerSets(
  snapshot: Snapshot,
  gateways: ReadonlyMap<string, ParentGateway>,
): AttachedListenerSet[] {
  const candidates: AttachedListenerSet[] = [];
  for (const listenerSet of snapshot.listenerSets) {
    const namespace = namespaceOf(listenerSet);
    const ref = listenerSet.spec?.parentRef;
    if (ref === undefined) continue;
    if ((ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (ref.kind ?? 'Gateway') !== 'Gateway') continue;
    const gatewayKey = `${ref.namespace ?? namespace}/${ref.name}`;
    const parent = gateways.get(gatewayKey);
    if (parent === undefined) continue;
    const key = keyOf(listenerSet);
    const base = { listenerSet, key, gatewayKey };
    if (!parent.accepted) {
      candidates.push({
        ...base,
        problem: { reason: 'ParentNotAccepted', message: `parent Gateway ${gatewayKey} is not accepted` },
        listeners: [],
      });
      continue;
    }
    if (!allowsListenerSet(snapshot, parent.gateway, namespace)) {
      candidates.push({
        ...base,
        problem: {
          reason: 'NotAllowed',
          message: `Gateway ${gatewayKey} does not allow ListenerSets from namespace ${namespace} (spec.allowedListeners)`,
        },
        listeners: [],
      });
      continue;
    }
    const listeners = (listenerSet.spec?.listeners ?? []).map((listener, index) =>
      validateListener(snapshot, parent.gateway, gatewayKey, listener, index, listenerSet),
    );
    candidates.push({ ...base, problem: undefined, listeners });
  }
  const ordered = [...candidates].sort(
    (a, b) =>
      compareCreation(a.listenerSet.metadata.creationTimestamp, b.listenerSet.metadata.creationTimestamp) ||
      compareStrings(a.key, b.key),
  );
  const merged = new Map<string, ListenerState[]>();
  for (const [key, parent] of gateways) merged.set(key, [...parent.listeners]);
  for (const set of ordered) {
    const taken = merged.get(set.gatewayKey) as ListenerState[];
    for (const state of set.listeners) {
      state.conflict = conflictWith(state, taken);
      if (state.conflict === undefined) taken.push(state);
    }
  }
  return candidates;
}

/** Gateway.spec.allowedListeners.namespaces.from: None (default), Same, All or Selector. */
function allowsListenerSet(snapshot: Snapshot, gateway: Gateway, namespace: string): boolean {
  const from = gateway.spec?.allowedListeners?.namespaces;
  switch (from?.from ?? 'None') {
    case 'All':
      return true;
    case 'Same':
      return namespace === namespaceOf(gateway);
    case 'Selector':
      return (
        from?.selector !== undefined &&
        matchesLabelSelector(from.selector, namespaceLabels(snapshot, namespace))
      );
    default:
      return false;
  }
}

function conflictWith(state: ListenerState, taken: readonly ListenerState[]): ListenerState['conflict'] {
  const { port, protocol } = state.listener;
  for (const other of taken) {
    if (other.listener.port !== port) continue;
    if (transportOf(other.listener.protocol) !== transportOf(protocol)) continue;
    if (other.listener.protocol !== protocol) {
      return {
        reason: 'ProtocolConflict',
        message: `port ${port} already serves ${other.listener.protocol} for listener ${describe(other)}`,
      };
    }
    if ((other.hostname ?? '') === (state.hostname ?? '')) {
      return {
        reason: 'HostnameConflict',
        message: `listener ${describe(other)} already serves port ${port} for hostname ${state.hostname ?? '(none)'}`,
      };
    }
  }
  return undefined;
}

function describe(state: ListenerState): string {
  const owner = state.listenerSet ? `ListenerSet ${keyOf(state.listenerSet)}` : `Gateway ${state.gatewayKey}`;
  return `${state.listener.name} of ${owner}`;
}
