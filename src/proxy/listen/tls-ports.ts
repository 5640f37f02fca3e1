import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { RouteTable } from '../../ir/route-table.ts';
import { TlsMetrics } from '../../metrics/tls-metrics.ts';
import type { CompiledBackend } from '../compile/compile-backends.ts';
import type { SecureContexts } from '../compile/secure-contexts.ts';
import { type CompiledTlsPort, compileTlsPorts } from '../compile/tls-compile.ts';
import { bindListenerPort } from './bind-listener-port.ts';
import type { ListenerBindings } from './listener-bindings.ts';
import { DEFAULT_TLS_PORT_OPTIONS, type TlsPortOptions, TlsPortServer } from './tls-port-server.ts';

export interface TlsPortsOptions {
  readonly host: string;
  readonly bindPort: (gatewayPort: number) => number;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly drainMs: number;
  readonly server?: Partial<TlsPortOptions>;
  /** Where each port's bind state is recorded; a port that could not be bound is retried through it. */
  readonly bindings: ListenerBindings;
  /** Runs a retry between routing tables (the proxy's apply queue). */
  readonly serialize: (task: () => Promise<void>) => void;
  /** Terminated listeners' contexts, shared with the HTTPS listeners (one ticket key set). */
  readonly secureContexts: SecureContexts;
}

/**
 * The TLS listener ports of the routing table (RouteTable.tlsPorts): opens and closes one TlsPortServer per
 * port and address, and swaps the compiled port of those that stay, so open connections are untouched.
 */
export class TlsPorts {
  readonly #servers = new Map<string, TlsPortServer>();
  readonly #options: TlsPortsOptions;
  readonly #metrics: TlsMetrics;
  readonly #serverOptions: TlsPortOptions;
  /** The compiled ports of the table in force, for retries. */
  #compiled: ReadonlyMap<string, CompiledTlsPort> = new Map();

  constructor(options: TlsPortsOptions) {
    this.#options = options;
    this.#metrics = new TlsMetrics(options.registry);
    this.#serverOptions = { ...DEFAULT_TLS_PORT_OPTIONS, ...options.server };
  }

  boundPorts(): ReadonlyMap<number, number> {
    const out = new Map<number, number>();
    for (const server of this.#servers.values()) out.set(server.gatewayPort, server.boundPort);
    return out;
  }

  async apply(table: RouteTable, backends: ReadonlyMap<string, CompiledBackend>): Promise<void> {
    const { logger } = this.#options;
    const compiled = compileTlsPorts(table, backends, logger, this.#options.secureContexts);
    const closing: Promise<void>[] = [];
    for (const [key, server] of this.#servers) {
      if (compiled.has(key)) continue;
      this.#servers.delete(key);
      closing.push(server.close(this.#options.drainMs));
      logger.info({ port: server.gatewayPort }, 'TLS listener port closed');
    }
    for (const key of this.#options.bindings.keys('tls')) {
      if (!compiled.has(portKey(key))) this.#options.bindings.forget(key);
    }
    await Promise.all(closing.map((p) => Promise.race([p, new Promise((r) => setTimeout(r, 50))])));
    this.#compiled = compiled;
    for (const [key, port] of compiled) {
      const existing = this.#servers.get(key);
      if (existing) existing.swap(port);
      else await this.#open(key, port);
    }
  }

  async #open(key: string, port: CompiledTlsPort): Promise<void> {
    const server = new TlsPortServer(port, this.#options.logger, this.#metrics, this.#serverOptions);
    const toBind = { kind: 'tls' as const, port: port.port, address: port.address, protocol: 'TLS' };
    const bound = await bindListenerPort(server, toBind, bindingKey(key), this.#options, async () => {
      const current = this.#compiled.get(key);
      if (current !== undefined && !this.#servers.has(key)) await this.#open(key, current);
    });
    if (bound) this.#servers.set(key, server);
  }

  async close(drainMs: number): Promise<void> {
    const servers = [...this.#servers.values()];
    this.#servers.clear();
    this.#compiled = new Map();
    await Promise.all(servers.map((s) => s.close(drainMs)));
  }
}

const bindingKey = (key: string): string => `tls ${key}`;
const portKey = (bindingKey: string): string => bindingKey.slice('tls '.length);
