import { createSecureContext, type SecureContext } from 'node:tls';
import type { Logger } from 'pino';
import type { RouteTable, TlsPortConfig } from '../../ir/route-table.ts';
import type { CompiledBackend } from './compile-backends.ts';
import { HostSelector } from './host-selector.ts';

export interface CompiledTlsTarget {
  /** Undefined for an invalid backendRef: its share of connections is closed. */
  readonly backend: CompiledBackend | undefined;
  readonly cumulativeWeight: number;
}

export interface CompiledTlsRoute {
  readonly route: string;
  readonly targets: readonly CompiledTlsTarget[];
  readonly totalWeight: number;
}

export interface CompiledTlsListener {
  readonly id: string;
  readonly gateway: string;
  readonly mode: 'Passthrough' | 'Terminate';
  /** Terminate only; undefined when the certificate did not load (connections are closed). */
  readonly context: SecureContext | undefined;
  readonly routes: HostSelector<CompiledTlsRoute>;
}

export interface CompiledTlsPort {
  readonly port: number;
  readonly address: string | undefined;
  readonly gateways: string;
  readonly listeners: HostSelector<CompiledTlsListener>;
}

/** Compiles `RouteTable.tlsPorts` once per table: host selectors, weight tables and secure contexts. */
export function compileTlsPorts(
  table: RouteTable,
  backends: ReadonlyMap<string, CompiledBackend>,
  logger: Logger,
): Map<string, CompiledTlsPort> {
  const out = new Map<string, CompiledTlsPort>();
  for (const port of table.tlsPorts ?? []) out.set(tlsListenKey(port), compilePort(port, backends, logger));
  return out;
}

export function tlsListenKey(port: { readonly address?: string | undefined; readonly port: number }): string {
  return `${port.address ?? ''}|${port.port}`;
}

function compilePort(
  port: TlsPortConfig,
  backends: ReadonlyMap<string, CompiledBackend>,
  logger: Logger,
): CompiledTlsPort {
  const listeners = new HostSelector<CompiledTlsListener>();
  for (const listener of port.listeners) {
    const routes = new HostSelector<CompiledTlsRoute>();
    for (const entry of listener.routes) {
      const targets: CompiledTlsTarget[] = [];
      let total = 0;
      for (const weighted of entry.backends) {
        if (weighted.weight <= 0) continue;
        total += weighted.weight;
        const target = weighted.target;
        targets.push({
          backend: target.kind === 'Backend' ? backends.get(target.id) : undefined,
          cumulativeWeight: total,
        });
      }
      routes.add(entry.hostname, { route: entry.route, targets, totalWeight: total });
    }
    let context: SecureContext | undefined;
    const certificates = listener.tls?.certificates ?? [];
    if (listener.mode === 'Terminate' && certificates.length > 0) {
      try {
        context = createSecureContext({
          cert: certificates.map((c) => c.certPem),
          key: certificates.map((c) => c.keyPem),
        });
      } catch (err) {
        // The message names the listener only: key material never goes into logs.
        logger.warn(
          { listener: listener.id, err: (err as Error).message.split('\n')[0] },
          'TLS listener certificate rejected; its connections will be closed',
        );
      }
    }
    listeners.add(listener.hostname, {
      id: listener.id,
      gateway: listener.gateway,
      mode: listener.mode,
      context,
      routes,
    });
  }
  return { port: port.port, address: port.address, gateways: port.gateways.join(','), listeners };
}

/** Weighted choice among a route's targets; `random` is in [0, 1). */
export function chooseTlsTarget(route: CompiledTlsRoute, random: number): CompiledTlsTarget | undefined {
  if (route.totalWeight <= 0) return undefined;
  const point = random * route.totalWeight;
  return route.targets.find((t) => point < t.cumulativeWeight);
}
