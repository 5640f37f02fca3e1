import type { ListenerSetStatus, StatusUpdate } from '../ir/status.ts';
import { condition, generationOf } from './conditions.ts';
import { namespaceOf } from './defaults.ts';
import { listenerStatus } from './gateway-status.ts';
import type { AttachedListenerSet } from './listener-sets.ts';
import { isProgrammed } from './listeners.ts';

/** Whether the ListenerSet is accepted: taken by its Gateway and left with at least one servable listener. */
export function isListenerSetAccepted(set: AttachedListenerSet): boolean {
  return set.problem === undefined && set.listeners.some((s) => isProgrammed(s));
}

/**
 * ListenerSet status (GEP-1713): Accepted and Programmed (NotAllowed when the Gateway's allowedListeners does
 * not admit it, ListenersNotValid when no listener can be served), and one entry per listener as a Gateway has.
 */
export function listenerSetStatus(
  set: AttachedListenerSet,
  attachedRoutes: ReadonlyMap<string, number>,
): StatusUpdate {
  const generation = generationOf(set.listenerSet);
  const accepted = isListenerSetAccepted(set);
  const reason = accepted ? undefined : (set.problem?.reason ?? 'ListenersNotValid');
  const message = set.problem?.message ?? 'no listener of this ListenerSet can be served';
  const status: ListenerSetStatus = {
    conditions: [
      reason === undefined
        ? condition('Accepted', true, 'Accepted', 'ListenerSet is accepted', generation)
        : condition('Accepted', false, reason, message, generation),
      reason === undefined
        ? condition('Programmed', true, 'Programmed', 'ListenerSet is programmed', generation)
        : condition('Programmed', false, reason, message, generation),
    ],
    listeners: set.listeners.map((s) => listenerStatus(s, attachedRoutes.get(s.id) ?? 0, generation, true)),
  };
  return {
    kind: 'ListenerSet',
    namespace: namespaceOf(set.listenerSet),
    name: set.listenerSet.metadata.name,
    generation,
    status,
  };
}
