import type { TlsPortConfig } from '../ir/route-table.ts';
import { compareStrings } from '../snapshot/object-order.ts';
import { compareHostnameSpecificity } from './hostnames.ts';
import { isProgrammed, type ListenerState } from './listeners.ts';
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
  const byPort = new Map<string, ServedTlsListener[]>();
  for (const served of listeners) {
    if (served.state.protocol !== 'TLS' || !isProgrammed(served.state)) continue;
    const key = `${served.address ?? ''}|${served.state.listener.port}`;
    byPort.set(key, [...(byPort.get(key) ?? []), served]);
  }
  return [...byPort.values()]
    .map((group) =>
      group.sort(
        (a, b) =>
          compareHostnameSpecificity(a.state.hostname, b.state.hostname) ||
          compareStrings(a.state.gatewayKey, b.state.gatewayKey) ||
          a.state.index - b.state.index,
      ),
    )
    .sort(
      (a, b) =>
        (a[0]?.state.listener.port ?? 0) - (b[0]?.state.listener.port ?? 0) ||
        compareStrings(a[0]?.address ?? '', b[0]?.address ?? ''),
    )
    .map((group) => {
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
