import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { EchoResponse } from '../../src/demo/echo/echo-server.ts';
import type { HttpFilter } from '../../src/ir/http-filters.ts';
import type {
  BackendCluster,
  BackendProtocol,
  ListenerConfig,
  PathMatch,
  PortConfig,
  RouteAction,
  RouteEntry,
  RouteMatch,
  RouteTable,
  UpstreamEndpoint,
  VirtualHost,
  WeightedBackend,
} from '../../src/ir/route-table.ts';
import type { BalancerFactory } from '../../src/lb/balancer.ts';
import { ProxyServer, type ProxyServerOptions } from '../../src/proxy/index.ts';
import { createRoundRobinFactory } from './round-robin-factory.ts';

export const silentLogger = pino({ level: 'silent' });

export function endpoint(port: number, extra: Partial<UpstreamEndpoint> = {}): UpstreamEndpoint {
  return {
    key: `127.0.0.1:${port}`,
    address: '127.0.0.1',
    port,
    cluster: 'cluster-a',
    zone: 'zone-a',
    ready: true,
    weight: 1,
    ...extra,
  };
}

export function backend(
  name: string,
  ports: readonly number[],
  protocol: BackendProtocol = 'http1',
): BackendCluster {
  return {
    id: `Service/default/${name}:80`,
    kind: 'Service',
    namespace: 'default',
    name,
    port: 80,
    protocol,
    trafficDistribution: 'Default',
    tiers: ports.length === 0 ? [] : [ports.map((p) => endpoint(p))],
  };
}

export function to(
  cluster: BackendCluster,
  weight = 1,
  filters: readonly HttpFilter[] = [],
): WeightedBackend {
  return { weight, target: { kind: 'Backend', id: cluster.id }, filters };
}

export function invalid(weight = 1): WeightedBackend {
  return { weight, target: { kind: 'Invalid', reason: 'BackendNotFound' }, filters: [] };
}

export interface EntryOptions {
  readonly route?: string;
  readonly path?: PathMatch;
  readonly method?: string;
  readonly headers?: RouteMatch['headers'];
  readonly queryParams?: RouteMatch['queryParams'];
  readonly filters?: readonly HttpFilter[];
  readonly timeouts?: RouteAction['timeouts'];
  readonly retry?: RouteAction['retry'];
}

export function entry(backends: readonly WeightedBackend[], options: EntryOptions = {}): RouteEntry {
  return {
    route: options.route ?? 'default/route',
    ruleIndex: 0,
    match: {
      path: options.path ?? { kind: 'PathPrefix', value: '/' },
      ...(options.method === undefined ? {} : { method: options.method }),
      headers: options.headers ?? [],
      queryParams: options.queryParams ?? [],
    },
    action: {
      filters: options.filters ?? [],
      backends,
      ...(options.timeouts === undefined ? {} : { timeouts: options.timeouts }),
      ...(options.retry === undefined ? {} : { retry: options.retry }),
    },
  };
}

export function vhost(hostname: string, routes: readonly RouteEntry[]): VirtualHost {
  return { hostname, routes };
}

export function listener(
  id: string,
  hostname: string | undefined,
  virtualHosts: readonly VirtualHost[],
  extra: Partial<ListenerConfig> = {},
): ListenerConfig {
  return {
    id: `default/gw/${id}`,
    gateway: 'default/gw',
    ...(hostname === undefined ? {} : { hostname }),
    virtualHosts,
    ...extra,
  };
}

export function httpPort(port: number, listeners: readonly ListenerConfig[]): PortConfig {
  return { port, protocol: 'HTTP', gateways: ['default/gw'], listeners };
}

/** A table with one HTTP port (80) whose single listener and virtual host accept any host. */
export function simpleTable(routes: readonly RouteEntry[], backends: readonly BackendCluster[]): RouteTable {
  return {
    ports: [httpPort(80, [listener('http', undefined, [vhost('*', routes)])])],
    backends: Object.fromEntries(backends.map((b) => [b.id, b])),
  };
}

export interface TestProxy {
  readonly proxy: ProxyServer;
  readonly registry: Registry;
  /** Bound port for a Gateway port (default 80). */
  port(gatewayPort?: number): number;
  close(): Promise<void>;
}

export async function startProxy(
  table: RouteTable,
  balancers: BalancerFactory = createRoundRobinFactory(),
  options: Partial<ProxyServerOptions> = {},
): Promise<TestProxy> {
  const registry = new Registry();
  const proxy = new ProxyServer({
    host: '127.0.0.1',
    bindPort: () => 0,
    balancers,
    registry,
    logger: silentLogger,
    drainTimeoutMs: 500,
    ...options,
  });
  await proxy.apply(table);
  return {
    proxy,
    registry,
    port(gatewayPort = 80) {
      const bound = proxy.boundPorts().get(gatewayPort);
      if (bound === undefined) throw new Error(`gateway port ${gatewayPort} is not bound`);
      return bound;
    },
    close: () => proxy.close(),
  };
}

export interface SendOptions {
  readonly method?: string;
  readonly host?: string;
  readonly headers?: Record<string, string | string[]>;
  readonly body?: Buffer | string;
}

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: string[];
  readonly text: string;
  readonly bytes: number;
  echo(): EchoResponse;
}

/** Sends one request with node:http (the path goes out byte for byte) on a fresh connection. */
export function send(port: number, path: string, options: SendOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        agent: false,
        setHost: false,
        headers: { host: options.host ?? 'example.com', ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const text = body.toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            rawHeaders: res.rawHeaders,
            text,
            bytes: body.length,
            echo: () => {
              if (!String(res.headers['content-type']).startsWith('application/json')) {
                throw new Error(
                  `not an echo answer (${res.statusCode} ${res.headers['content-type']}): ${text}`,
                );
              }
              return JSON.parse(text) as EchoResponse;
            },
          });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Writes each part on one connection, a few ms apart (separate reads at the proxy), and reads until idle or closed. */
export function sendParts(port: number, parts: readonly (string | Buffer)[], idleMs = 700): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      clearTimeout(timer);
      timer = setTimeout(done, idleMs);
    });
    socket.on('error', () => {});
    socket.on('close', done);
    socket.on('connect', async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        socket.write(part);
        await new Promise((r) => setTimeout(r, 2));
      }
      timer = setTimeout(done, idleMs);
    });
  });
}
