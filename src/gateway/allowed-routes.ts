import type { Snapshot } from '../snapshot/snapshot.ts';
import { namespaceOf } from './defaults.ts';
import { matchesLabelSelector, namespaceLabels } from './label-selector.ts';
import type { ListenerState } from './listeners.ts';

/**
 * Listener.allowedRoutes: the route's kind must be among the listener's supported kinds, and its namespace
 * must be allowed by `namespaces.from` (default Same; Selector matches the Namespace's labels).
 */
export function listenerAllowsRoute(
  snapshot: Snapshot,
  state: ListenerState,
  route: { readonly kind: string; readonly routeNamespace: string },
): boolean {
  if (!state.supportedKinds.some((k) => k.kind === route.kind)) return false;
  const namespaces = state.listener.allowedRoutes?.namespaces;
  switch (namespaces?.from ?? 'Same') {
    case 'All':
      return true;
    case 'Same':
      // A ListenerSet listener's Same is the ListenerSet's namespace.
      return route.routeNamespace === namespaceOf(state.listenerSet ?? state.gateway);
    case 'Selector':
      return (
        namespaces?.selector !== undefined &&
        matchesLabelSelector(namespaces.selector, namespaceLabels(snapshot, route.routeNamespace))
      );
    default:
      return false;
  }
}
