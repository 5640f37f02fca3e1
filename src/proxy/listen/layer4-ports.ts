import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { RouteTable } from '../../ir/route-table.ts';
import { Layer4Metrics } from '../../metrics/layer4-metrics.ts';
import type { CompiledBackend } from '../compile/compile-backends.ts';
import { type CompiledLayer4Port, compileLayer4Ports, LiveEndpoints } from '../compile/layer4-compile.ts';
import { bindListenerPort } from './bind-listener-port.ts';
import type { ListenerBindings } from './listener-bindings.ts';
import { DEFAULT_TCP_PORT_OPTIONS, type TcpPortOptions, TcpPortServer } from './tcp-port-server.ts';
import { DEFAULT_UDP_PORT_OPTIONS, type UdpPortOptions, UdpPortServer } from './udp-port-server.ts';

export interface Layer4PortsOptions {
  readonly host: string;
  readonly bindPort: (gatewayPort: number) => number;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly drainMs: number;
  readonly tcp?: Partial<TcpPortOptions>;
  readonly udp?: Partial<UdpPortOptions>;
  /** Where each port's bind state is recorded; a port that could not be bound is retried through it. */
  readonly bindings: ListenerBindings;
  /** Runs a retry between routing tables (the proxy's apply queue). */
  readonly serialize: (task: () => Promise<void>) => void;
}

type Layer4Server = TcpPortServer | UdpPortServer;

/**
 * The TCP and UDP listener ports of the routing table (RouteTable.layer4Ports): opens and closes one server per
 * protocol, address and port, swaps the compiled port of those that stay (open connections and flows are
 * untouched), and after every table or endpoint change ends the connections and flows whose endpoint went away.
 */
export class Layer4Ports {
  readonly #servers = new Map<string, Layer4Server>();
  readonly #options: Layer4PortsOptions;
  readonly #metrics: Layer4Metrics;
  readonly #tcp: TcpPortOptions;
  readonly #udp: UdpPortOptions;
  /** The compiled ports of the table in force, for retries. */
  #compiled: ReadonlyMap<string, CompiledLayer4Port> = new Map();

  constructor(options: Layer4PortsOptions) {
    this.#options = options;
    this.#metrics = new Layer4Metrics(options.registry);
    this.#tcp = { ...DEFAULT_TCP_PORT_OPTIONS, ...options.tcp };
    this.#udp = { ...DEFAULT_UDP_PORT_OPTIONS, ...options.udp };
  }

  /** Gateway port to bound port, TCP ports only (what HTTP-style readiness and the tests read). */
  boundPorts(protocol: 'TCP' | 'UDP' = 'TCP'): ReadonlyMap<number, number> {
    const out = new Map<number, number>();
    for (const server of this.#servers.values()) {
      const isTcp = server instanceof TcpPortServer;
      if (isTcp === (protocol === 'TCP')) out.set(server.gatewayPort, server.boundPort);
    }
    return out;
  }

  async apply(table: RouteTable, backends: ReadonlyMap<string, CompiledBackend>): Promise<void> {
    const { logger } = this.#options;
    const compiled = compileLayer4Ports(table, backends);
    const closing: Promise<void>[] = [];
    for (const [key, server] of this.#servers) {
      if (compiled.has(key)) continue;
      this.#servers.delete(key);
      closing.push(server.close(this.#options.drainMs));
      logger.info({ port: server.gatewayPort, key }, 'listener port closed');
    }
    for (const kind of ['tcp', 'udp'] as const) {
      for (const key of this.#options.bindings.keys(kind)) {
        if (!compiled.has(listenKeyOf(key))) this.#options.bindings.forget(key);
      }
    }
    await Promise.all(closing.map((p) => Promise.race([p, new Promise((r) => setTimeout(r, 50))])));
    this.#compiled = compiled;
    for (const [key, port] of compiled) {
      const existing = this.#servers.get(key);
      if (existing) {
        existing.swap(port as CompiledLayer4Port);
        continue;
      }
      await this.#open(key, port);
    }
    this.endpointsChanged(backends);
  }

  /** Ends the connections and flows whose endpoint is no longer among its backend's. */
  endpointsChanged(backends: ReadonlyMap<string, CompiledBackend>): void {
    const live = new LiveEndpoints(backends);
    let ended = 0;
    for (const server of this.#servers.values()) ended += server.endpointsChanged(live);
    if (ended > 0)
      this.#options.logger.info({ ended }, 'layer-4 connections and flows of removed endpoints ended');
  }

  async #open(key: string, port: CompiledLayer4Port): Promise<void> {
    const { logger } = this.#options;
    const server =
      port.protocol === 'TCP'
        ? new TcpPortServer(port, logger, this.#metrics, this.#tcp)
        : new UdpPortServer(port, logger, this.#metrics, this.#udp);
    const toBind = {
      kind: port.protocol === 'TCP' ? ('tcp' as const) : ('udp' as const),
      port: port.port,
      address: port.address,
      protocol: port.protocol,
    };
    const bound = await bindListenerPort(server, toBind, bindingKey(key), this.#options, async () => {
      const current = this.#compiled.get(key);
      if (current !== undefined && !this.#servers.has(key)) await this.#open(key, current);
    });
    if (bound) this.#servers.set(key, server);
    else await server.close(0).catch(() => {});
  }

  async close(drainMs: number): Promise<void> {
    const servers = [...this.#servers.values()];
    this.#servers.clear();
    this.#compiled = new Map();
    await Promise.all(servers.map((s) => s.close(drainMs)));
  }
}

const bindingKey = (key: string): string => `layer4 ${key}`;
const listenKeyOf = (bindingKey: string): string => bindingKey.slice('layer4 '.length);
