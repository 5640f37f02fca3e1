import type { Layer4PortConfig, RouteTable } from '../../ir/route-table.ts';
import type { CompiledBackend } from './compile-backends.ts';

export interface CompiledLayer4Target {
  /** Undefined for an invalid backendRef: its share of connections (or flows) is refused. */
  readonly backend: CompiledBackend | undefined;
  readonly cumulativeWeight: number;
}

/** The route that carries a listener's traffic (the oldest attached), its weight table compiled once. */
export interface CompiledLayer4Route {
  readonly route: string;
  readonly targets: readonly CompiledLayer4Target[];
  readonly totalWeight: number;
}

export interface CompiledLayer4Port {
  readonly port: number;
  readonly protocol: 'TCP' | 'UDP';
  readonly address: string | undefined;
  readonly listener: string;
  readonly gateway: string;
  /** Undefined when no route is attached: connections are reset, datagrams dropped. */
  readonly route: CompiledLayer4Route | undefined;
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
  let route: CompiledLayer4Route | undefined;
  if (first !== undefined) {
    const targets: CompiledLayer4Target[] = [];
    let total = 0;
    for (const weighted of first.backends) {
      if (weighted.weight <= 0) continue;
      total += weighted.weight;
      const target = weighted.target;
      targets.push({
        backend: target.kind === 'Backend' ? backends.get(target.id) : undefined,
        cumulativeWeight: total,
      });
    }
    route = { route: first.route, targets, totalWeight: total };
  }
  return {
    port: port.port,
    protocol: port.protocol,
    address: port.address,
    listener: port.listener,
    gateway: port.gateway,
    route,
  };
}

/** Weighted choice among a route's targets (GEP-1748 weights); `random` is in [0, 1). */
export function chooseLayer4Target(
  route: CompiledLayer4Route,
  random: number,
): CompiledLayer4Target | undefined {
  if (route.totalWeight <= 0) return undefined;
  const point = random * route.totalWeight;
  return route.targets.find((t) => point < t.cumulativeWeight);
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
