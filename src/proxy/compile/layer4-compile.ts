import type { Layer4PortConfig, RouteTable } from '../../ir/route-table.ts';
import type { CompiledBackend } from './compile-backends.ts';
import { compileWeightedRoute, type WeightedRoute } from './weighted-route.ts';

export interface CompiledLayer4Port {
  readonly port: number;
  readonly protocol: 'TCP' | 'UDP';
  readonly address: string | undefined;
  readonly listener: string;
  readonly gateway: string;
  /**
   * The route that carries the listener's traffic (the oldest attached); undefined when none is attached:
   * connections are reset, datagrams dropped.
   */
  readonly route: WeightedRoute | undefined;
}

/** Compiles `RouteTable.layer4Ports` once per table, keyed by layer4ListenKey. */
export function compileLayer4Ports(
  table: RouteTable,
  backends: ReadonlyMap<string, CompiledBackend>,
): Map<string, CompiledLayer4Port> {
  const out = new Map<string, CompiledLayer4Port>();
  for (const port of table.layer4Ports ?? []) out.set(layer4ListenKey(port), compilePort(port, backends));
  return out;
}

/** One socket per protocol, address and port. */
export function layer4ListenKey(port: {
  readonly protocol: 'TCP' | 'UDP';
  readonly address?: string | undefined;
  readonly port: number;
}): string {
  return `${port.protocol}|${port.address ?? ''}|${port.port}`;
}

function compilePort(
  port: Layer4PortConfig,
  backends: ReadonlyMap<string, CompiledBackend>,
): CompiledLayer4Port {
  const first = port.routes[0];
  const route = first === undefined ? undefined : compileWeightedRoute(first.route, first.backends, backends);
  return {
    port: port.port,
    protocol: port.protocol,
    address: port.address,
    listener: port.listener,
    gateway: port.gateway,
    route,
  };
}

/**
 * Whether an endpoint is still one of its backend's, in the backends in force: a connection or flow whose
 * endpoint went away ends. Each backend's keys are collected once, and only for backends asked about.
 */
export class LiveEndpoints {
  readonly #backends: ReadonlyMap<string, CompiledBackend>;
  readonly #keys = new Map<string, Set<string>>();

  constructor(backends: ReadonlyMap<string, CompiledBackend>) {
    this.#backends = backends;
  }

  has(backendId: string, endpointKey: string): boolean {
    let keys = this.#keys.get(backendId);
    if (keys === undefined) {
      keys = new Set();
      const backend = this.#backends.get(backendId);
      for (const tier of backend?.cluster.tiers ?? []) for (const endpoint of tier) keys.add(endpoint.key);
      this.#keys.set(backendId, keys);
    }
    return keys.has(endpointKey);
  }
}
