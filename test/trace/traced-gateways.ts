import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { expect } from 'vitest';
import type { EchoResponse } from '../../src/demo/echo/echo-server.ts';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import {
  gateway,
  gatewayClass,
  httpRoute,
  importedSlice,
  service,
  serviceImport,
  serviceSlice,
  yamlDocs,
} from '../support/manifests.ts';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';

export const NS = 'shop';
export const CALLER_SPAN = '00f067aa0ba902b7';
export const TRACESTATE = 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7';
/** Two gateways start side by side from source: on a loaded machine that can take half a minute. */
export const START_TIMEOUT_MS = 45_000;
const SERVER = 2;
const CLIENT = 3;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

/** One request's spans as the collector got them: the server span and its client spans by attempt. */
export interface Trace {
  readonly server: ReceivedSpan;
  readonly clients: ReceivedSpan[];
}

interface Mirrored {
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;
}

/** An HTTPRoute `name` on the Gateway `edge`, for paths under `prefix`. */
const route = (
  name: string,
  backendRef: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  prefix = `/${name}`,
) =>
  httpRoute(name, NS, {
    parentRefs: [{ name: 'edge' }],
    rules: [
      { matches: [{ path: { type: 'PathPrefix', value: prefix } }], backendRefs: [backendRef], ...extra },
    ],
  });

/**
 * What tracing.e2e.test.ts runs against: an OTLP receiver; two gateways on the same manifests, one exporting to the
 * receiver (with an east-west listener) and one without --otlp-endpoint; echo backends `web-1`, `web-2` (the
 * Service `web`) and `far-1` (cluster `west`); a near endpoint nobody listens on (the ServiceImport `spill` refuses
 * there first); and a mirror backend that keeps the trace context of what it gets.
 */
export class TracedGateways {
  readonly agent = new Agent({ keepAliveTimeout: 10_000 });
  /** Every trace spansOf found. */
  readonly whole: Trace[] = [];

  private constructor(
    readonly receiver: OtlpReceiver,
    readonly echoes: readonly RunningEcho[],
    readonly shadow: Server,
    /** The mirror backend's requests: their trace context headers. */
    readonly mirrored: readonly Mirrored[],
    readonly ports: {
      readonly traced: number;
      readonly untraced: number;
      readonly eastWest: number;
      /** The near pod's port, where nothing listens: connections to it are refused. */
      readonly dead: number;
    },
    readonly traced: GatewayProcess,
    readonly untraced: GatewayProcess,
  ) {}

  get tracedPort(): number {
    return this.ports.traced;
  }
  get untracedPort(): number {
    return this.ports.untraced;
  }
  get eastWestPort(): number {
    return this.ports.eastWest;
  }
  get deadPort(): number {
    return this.ports.dead;
  }

  static async start(): Promise<TracedGateways> {
    const receiver = await OtlpReceiver.start();
    const echoes = await startEchoes(['web-1', 'web-2', { pod: 'far-1', cluster: 'west', zone: 'zone-w' }], {
      namespace: NS,
    });
    const mirrored: Mirrored[] = [];
    const shadow = createServer((req, res) => {
      const header = (name: string) => req.headers[name] as string | undefined;
      mirrored.push({ traceparent: header('traceparent'), tracestate: header('tracestate') });
      res.end('shadow');
    });
    await new Promise<void>((resolve) => shadow.listen(0, '127.0.0.1', resolve));
    const ports = {
      traced: await freePort(),
      untraced: await freePort(),
      eastWest: await freePort(),
      dead: await freePort(),
    };
    const manifests = (port: number) => ({
      'shop.yaml': shopManifests(port, echoes, ports.dead, (shadow.address() as AddressInfo).port),
    });
    // No active health checks: the refusing near pod must stay in its tier until a request finds it refusing.
    const common = ['--cluster', 'hub', '--zone', 'zone-a', '--no-health-checks'];
    const [traced, untraced] = await Promise.all([
      startGateway({
        manifests: manifests(ports.traced),
        startTimeoutMs: START_TIMEOUT_MS,
        args: [
          ...common,
          '--east-west-port',
          String(ports.eastWest),
          '--otlp-endpoint',
          receiver.url,
          '--trace-service-name',
          'edge-e2e',
          '--trace-batch-delay-ms',
          '50',
          '--trace-export-timeout-ms',
          '1000',
          // The log's `trace export recovered` is at info.
          '--log-level',
          'info',
        ],
      }),
      startGateway({ manifests: manifests(ports.untraced), args: common, startTimeoutMs: START_TIMEOUT_MS }),
    ]);
    return new TracedGateways(receiver, echoes, shadow, mirrored, ports, traced, untraced);
  }

  async stop(): Promise<void> {
    await Promise.all([this.traced.stop(), this.untraced.stop()]);
    await this.agent.close();
    await closeAll(this.echoes);
    await this.receiver.close();
    this.shadow.closeAllConnections();
    await new Promise((resolve) => this.shadow.close(resolve));
  }

  /** A request to a gateway port for Host shop.example.com; the echo backend's answer. */
  async send(
    port: number,
    path: string,
    headers: Record<string, string> = {},
    method = 'GET',
  ): Promise<{ status: number; echo: EchoResponse }> {
    const res = await request(`http://127.0.0.1:${port}${path}`, {
      dispatcher: this.agent,
      method,
      headers: { host: 'shop.example.com', ...headers },
    });
    const text = await res.body.text();
    return { status: res.statusCode, echo: JSON.parse(text) as EchoResponse };
  }

  /** The one traceparent the backend received, split into its parts. */
  upstreamContext(echo: EchoResponse): { traceId: string; parentId: string; flags: string } {
    const values = echo.headers.Traceparent ?? [];
    expect(values).toHaveLength(1);
    const match = TRACEPARENT.exec(values[0]!);
    if (match === null) throw new Error(`not a traceparent: ${values[0]}`);
    return { traceId: match[1]!, parentId: match[2]!, flags: match[3]! };
  }

  /** The trace's spans once the collector holds a server span and `clients` client spans for it. */
  spansOf(traceId: string, clients: number): Promise<Trace> {
    return eventually(async () => {
      const spans = this.receiver.spans.filter((s) => s.traceId === traceId);
      const server = spans.filter((s) => s.kind === SERVER);
      const client = spans.filter((s) => s.kind === CLIENT);
      if (server.length !== 1 || client.length !== clients)
        throw new Error(`trace ${traceId}: ${server.length} server, ${client.length} client spans so far`);
      client.sort(
        (a, b) =>
          Number(a.attributes['clusterset_gateway.attempt']) -
          Number(b.attributes['clusterset_gateway.attempt']),
      );
      const trace = { server: server[0]!, clients: client };
      this.whole.push(trace);
      return trace;
    }, 10_000);
  }

  /** A series' value in /metrics (`series` as Prometheus writes it, labels included); 0 while absent. */
  async metric(gw: GatewayProcess, series: string): Promise<number> {
    const text = (await gw.adminGet('/metrics')).body;
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? 0 : Number(line.slice(series.length + 1));
  }
}

function shopManifests(
  port: number,
  echoes: readonly RunningEcho[],
  deadPort: number,
  shadowPort: number,
): string {
  const [web1, web2, far] = echoes;
  return yamlDocs(
    gatewayClass(),
    gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port }]),
    service('web', NS),
    serviceSlice('web-1', 'web', NS, { port: web1!.port, pod: 'web-1' }),
    serviceSlice('web-2', 'web', NS, { port: web2!.port, pod: 'web-2' }),
    route('web', { name: 'web', port: 80 }),
    // The echo backends answer /status/503 with a 503, which this route retries once.
    route('flaky', { name: 'web', port: 80 }, { retry: { codes: [503], attempts: 1 } }, '/status'),
    serviceImport('spill', NS, 'PreferSameZone'),
    importedSlice('spill-near', 'spill', NS, 'hub', { port: deadPort, zone: 'zone-a', pod: 'near-1' }),
    importedSlice('spill-far', 'spill', NS, 'west', { port: far!.port, zone: 'zone-w', pod: 'far-1' }),
    route('spill', { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'spill', port: 80 }),
    service('shadow', NS),
    serviceSlice('shadow', 'shadow', NS, { port: shadowPort, pod: 'shadow' }),
    route(
      'mirror',
      { name: 'web', port: 80 },
      { filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'shadow', port: 80 } } }] },
    ),
    // Reached through the east-west listener by name, with no HTTPRoute.
    serviceImport('api', NS),
    importedSlice('api-west', 'api', NS, 'west', { port: far!.port, zone: 'zone-w', pod: 'far-1' }),
  );
}
