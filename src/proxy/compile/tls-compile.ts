import type { SecureContext } from 'node:tls';
import type { Logger } from 'pino';
import type { RouteTable, TlsPortConfig } from '../../ir/route-table.ts';
import type { CompiledBackend } from './compile-backends.ts';
import { HostSelector } from './host-selector.ts';
import type { SecureContexts } from './secure-contexts.ts';
import { compileWeightedRoute, type WeightedRoute } from './weighted-route.ts';

export interface CompiledTlsListener {
  readonly id: string;
  readonly gateway: string;
  readonly mode: 'Passthrough' | 'Terminate';
  /** Terminate only; undefined when the certificate did not load (connections are closed). */
  readonly context: SecureContext | undefined;
  readonly routes: HostSelector<WeightedRoute>;
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
  secureContexts: SecureContexts,
): Map<string, CompiledTlsPort> {
  const out = new Map<string, CompiledTlsPort>();
  for (const port of table.tlsPorts ?? [])
    out.set(tlsListenKey(port), compilePort(port, backends, logger, secureContexts));
  return out;
}

export function tlsListenKey(port: { readonly address?: string | undefined; readonly port: number }): string {
  return `${port.address ?? ''}|${port.port}`;
}

function compilePort(
  port: TlsPortConfig,
  backends: ReadonlyMap<string, CompiledBackend>,
  logger: Logger,
  secureContexts: SecureContexts,
): CompiledTlsPort {
  const listeners = new HostSelector<CompiledTlsListener>();
  for (const listener of port.listeners) {
    const routes = new HostSelector<WeightedRoute>();
    for (const entry of listener.routes)
      routes.add(entry.hostname, compileWeightedRoute(entry.route, entry.backends, backends));
    let context: SecureContext | undefined;
    const certificates = listener.tls?.certificates ?? [];
    if (listener.mode === 'Terminate' && certificates.length > 0) {
      try {
        context = secureContexts.get({
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
