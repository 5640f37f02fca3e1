import type { TlsPortConfig } from '../ir/route-table.ts';
import { compareStrings } from '../snapshot/object-order.ts';
import { compareHostnameSpecificity } from './hostnames.ts';
import { type ListenerState, listenersByPort } from './listeners.ts';
import type { AttachedTlsEntry } from './tls-route.ts';

export interface ServedTlsListener {
  readonly state: ListenerState;
  readonly address: string | undefined;
}

/**
 * One TlsPortConfig per TLS listener port and address. Listeners are ordered most specific hostname first and
 * each listener's route hostnames likewise, oldest route first among equal hostnames (GEP-2643: the most
 * specific intersection wins; conflicts go to the oldest route, then by name).
 */
export function buildTlsPorts(
  listeners: readonly ServedTlsListener[],
  entries: ReadonlyMap<string, readonly AttachedTlsEntry[]>,
): TlsPortConfig[] {
  return listenersByPort(listeners, ['TLS']).map((group) => {
    const first = group[0] as ServedTlsListener;
    return {
      port: first.state.listener.port,
      ...(first.address !== undefined ? { address: first.address } : {}),
      gateways: [...new Set(group.map((s) => s.state.gatewayKey))].sort(),
      listeners: group.map(({ state }) => ({
        id: state.id,
        gateway: state.gatewayKey,
        ...(state.hostname !== undefined ? { hostname: state.hostname } : {}),
        mode: state.listener.tls?.mode === 'Passthrough' ? 'Passthrough' : 'Terminate',
        ...(state.tls ? { tls: state.tls } : {}),
        routes: [...(entries.get(state.id) ?? [])]
          .sort(
            (a, b) =>
              compareHostnameSpecificity(a.hostname, b.hostname) ||
              compareStrings(a.createdAt ?? '', b.createdAt ?? '') ||
              compareStrings(a.route, b.route),
          )
          .map(({ hostname, route, backends }) => ({ hostname, route, backends })),
      })),
    } satisfies TlsPortConfig;
  });
}
