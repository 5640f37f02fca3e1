import type { Layer4PortConfig } from '../ir/route-table.ts';
import { compareCreation, compareStrings } from '../snapshot/object-order.ts';
import type { AttachedLayer4Route } from './layer4-routes.ts';
import { isProgrammed, type ListenerState } from './listeners.ts';

export interface ServedLayer4Listener {
  readonly state: ListenerState;
  readonly address: string | undefined;
}

/**
 * One Layer4PortConfig per programmed TCP or UDP listener, by port then address. Routes are ordered oldest
 * first (creationTimestamp, then `namespace/name`): upstream's conformance lets only the oldest route of a
 * listener carry traffic while every one stays Accepted.
 */
export function buildLayer4Ports(
  listeners: readonly ServedLayer4Listener[],
  entries: ReadonlyMap<string, readonly AttachedLayer4Route[]>,
): Layer4PortConfig[] {
  const ports: Layer4PortConfig[] = [];
  for (const { state, address } of listeners) {
    const protocol = state.protocol;
    if ((protocol !== 'TCP' && protocol !== 'UDP') || !isProgrammed(state)) continue;
    ports.push({
      port: state.listener.port,
      protocol,
      ...(address !== undefined ? { address } : {}),
      listener: state.id,
      gateway: state.gatewayKey,
      routes: [...(entries.get(state.id) ?? [])]
        .sort((a, b) => compareCreation(a.createdAt, b.createdAt) || compareStrings(a.route, b.route))
        .map(({ route, backends }) => ({ route, backends })),
    });
  }
  return ports.sort(
    (a, b) =>
      a.port - b.port ||
      compareStrings(a.protocol, b.protocol) ||
      compareStrings(a.address ?? '', b.address ?? '') ||
      compareStrings(a.listener, b.listener),
  );
}
