import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { RouteTable } from '../../ir/route-table.ts';
import { TlsMetrics } from '../../metrics/tls-metrics.ts';
import type { CompiledBackend } from '../compile/compile-backends.ts';
import { compileTlsPorts } from '../compile/tls-compile.ts';
import { DEFAULT_TLS_PORT_OPTIONS, type TlsPortOptions, TlsPortServer } from './tls-port-server.ts';

export interface TlsPortsOptions {
  readonly host: string;
  readonly bindPort: (gatewayPort: number) => number;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly drainMs: number;
  readonly server?: Partial<TlsPortOptions>;
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
    const compiled = compileTlsPorts(table, backends, logger);
    const closing: Promise<void>[] = [];
    for (const [key, server] of this.#servers) {
      if (compiled.has(key)) continue;
      this.#servers.delete(key);
      closing.push(server.close(this.#options.drainMs));
      logger.info({ port: server.gatewayPort }, 'TLS listener port closed');
    }
    await Promise.all(closing.map((p) => Promise.race([p, new Promise((r) => setTimeout(r, 50))])));
    for (const [key, port] of compiled) {
      const existing = this.#servers.get(key);
      if (existing) {
        existing.swap(port);
        continue;
      }
      const server = new TlsPortServer(port, logger, this.#metrics, this.#serverOptions);
      const address = port.address ?? this.#options.host;
      try {
        const bound = await server.listen(address, this.#options.bindPort(port.port));
        this.#servers.set(key, server);
        logger.info({ address, port: port.port, boundPort: bound, protocol: 'TLS' }, 'listener port opened');
      } catch (err) {
        logger.error(
          { address, port: port.port, err: (err as Error).message },
          'listener port could not be opened',
        );
      }
    }
  }

  async close(drainMs: number): Promise<void> {
    const servers = [...this.#servers.values()];
    this.#servers.clear();
    await Promise.all(servers.map((s) => s.close(drainMs)));
  }
}
