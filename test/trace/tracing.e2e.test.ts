import { connect, type IncomingHttpHeaders } from 'node:http2';
import { text } from 'node:stream/consumers';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

/**
 * docs/tracing.md as a user sees it: a real gateway exporting to a real OTLP/HTTP collector (test/support's
 * receiver), real echo backends that say which trace context reached them, and the gateway's /metrics.
 */
const NS = 'shop';
const SERVER = 2;
const CLIENT = 3;
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACESTATE = 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

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

describe('tracing end to end (docs/tracing.md)', () => {
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  let receiver: OtlpReceiver;
  let echoes: RunningEcho[];
  let traced: GatewayProcess;
  let untraced: GatewayProcess;
  let tracedPort: number;
  let untracedPort: number;
  /** The near pod's port, where nothing listens: connections to it are refused. */
  let deadPort: number;

  function manifests(port: number): Record<string, string> {
    const [web1, web2, far] = echoes;
    return {
      'shop.yaml': yamlDocs(
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
      ),
    };
  }

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    echoes = await startEchoes(['web-1', 'web-2', { pod: 'far-1', cluster: 'west', zone: 'zone-w' }], {
      namespace: NS,
    });
    deadPort = await freePort();
    tracedPort = await freePort();
    untracedPort = await freePort();
    // No active health checks: the refusing near pod must stay in its tier until a request finds it refusing.
    const common = ['--cluster', 'hub', '--zone', 'zone-a', '--no-health-checks'];
    [traced, untraced] = await Promise.all([
      startGateway({
        manifests: manifests(tracedPort),
        args: [
          ...common,
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
      startGateway({ manifests: manifests(untracedPort), args: common }),
    ]);
  }, 30_000);

  afterAll(async () => {
    await Promise.all([traced?.stop(), untraced?.stop()]);
    await agent.close();
    await closeAll(echoes ?? []);
    await receiver?.close();
  });

  async function send(
    port: number,
    path: string,
    headers: Record<string, string> = {},
    method = 'GET',
  ): Promise<{ status: number; echo: EchoResponse }> {
    const res = await request(`http://127.0.0.1:${port}${path}`, {
      dispatcher: agent,
      method,
      headers: { host: 'shop.example.com', ...headers },
    });
    const text = await res.body.text();
    return { status: res.statusCode, echo: JSON.parse(text) as EchoResponse };
  }

  /** The one traceparent the backend received, split into its parts. */
  function upstreamContext(echo: EchoResponse): { traceId: string; parentId: string; flags: string } {
    const values = echo.headers.Traceparent ?? [];
    expect(values).toHaveLength(1);
    const match = TRACEPARENT.exec(values[0]!);
    if (match === null) throw new Error(`not a traceparent: ${values[0]}`);
    return { traceId: match[1]!, parentId: match[2]!, flags: match[3]! };
  }

  interface Trace {
    readonly server: ReceivedSpan;
    readonly clients: ReceivedSpan[];
  }
  /** Every trace spansOf found, for the test of their times. */
  const whole: Trace[] = [];

  /** The trace's spans once the collector holds a server span and `clients` client spans for it. */
  function spansOf(traceId: string, clients: number): Promise<Trace> {
    return eventually(async () => {
      const spans = receiver.spans.filter((s) => s.traceId === traceId);
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
      whole.push(trace);
      return trace;
    }, 10_000);
  }

  /** A series' value in /metrics (`series` as Prometheus writes it, labels included); 0 while absent. */
  async function metric(gw: GatewayProcess, series: string): Promise<number> {
    const text = (await gw.adminGet('/metrics')).body;
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? 0 : Number(line.slice(series.length + 1));
  }

  it("continues the caller's trace: a server span, a client span under it, and the backend under that", async () => {
    const { status, echo } = await send(tracedPort, '/web/items?token=secret', {
      traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`,
      tracestate: TRACESTATE,
    });
    expect(status).toBe(200);
    const upstream = upstreamContext(echo);
    expect(upstream.traceId).toBe(TRACE_ID);
    expect(upstream.flags).toBe('01');
    expect(echo.headers.Tracestate).toEqual([TRACESTATE]);

    const { server, clients } = await spansOf(TRACE_ID, 1);
    const client = clients[0]!;
    expect(server.name).toBe('GET shop/web');
    expect(server.parentSpanId).toBe(CALLER_SPAN);
    expect(server.resource['service.name']).toBe('edge-e2e');
    expect(server.statusCode).not.toBe(2);
    expect(server.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.path': '/web/items',
      'url.scheme': 'http',
      'server.address': 'shop.example.com',
      'server.port': tracedPort,
      'network.peer.address': '127.0.0.1',
      'network.protocol.version': '1.1',
      'http.response.status_code': 200,
      'clusterset_gateway.route': 'shop/web',
      'clusterset_gateway.gateway': 'shop/edge',
      'clusterset_gateway.attempts': 1,
      'clusterset_gateway.cluster': 'hub',
      'clusterset_gateway.outcome': 'response',
    });
    expect(String(server.attributes['clusterset_gateway.backend'])).toContain('web');
    const servedBy = echoes.find((e) => e.identity.pod === echo.pod)!;
    expect(server.attributes['clusterset_gateway.endpoint']).toContain(String(servedBy.port));
    expect(Object.values(server.attributes).some((v) => String(v).includes('secret'))).toBe(false);

    expect(client.name).toBe('GET');
    expect(client.parentSpanId).toBe(server.spanId);
    expect(client.spanId).toBe(upstream.parentId);
    expect(client.attributes).toMatchObject({
      'http.request.method': 'GET',
      'server.address': '127.0.0.1',
      'server.port': servedBy.port,
      'network.peer.port': servedBy.port,
      'http.response.status_code': 200,
      'clusterset_gateway.attempt': 1,
      'clusterset_gateway.cluster': 'hub',
      'clusterset_gateway.endpoint': server.attributes['clusterset_gateway.endpoint'],
      'clusterset_gateway.outcome': 'response',
    });
    expect(client.attributes['http.request.resend_count']).toBeUndefined();
  });

  it('starts a sampled trace for a request without a traceparent, and for a malformed one', async () => {
    const fresh = await send(tracedPort, '/web/fresh');
    expect(fresh.status).toBe(200);
    const freshContext = upstreamContext(fresh.echo);
    expect(freshContext.flags).toBe('01');
    const freshTrace = await spansOf(freshContext.traceId, 1);
    expect(freshTrace.server.parentSpanId).toBe('');
    expect(freshTrace.clients[0]!.spanId).toBe(freshContext.parentId);

    // Upper-case hex is not a valid traceparent: a new trace, never an error.
    const malformedId = TRACE_ID.toUpperCase().replace('4BF', 'ABF');
    const malformed = await send(tracedPort, '/web/malformed', {
      traceparent: `00-${malformedId}-${CALLER_SPAN}-01`,
      tracestate: TRACESTATE,
    });
    expect(malformed.status).toBe(200);
    const context = upstreamContext(malformed.echo);
    expect(context.traceId).not.toBe(malformedId.toLowerCase());
    expect(context.traceId).not.toBe(freshContext.traceId);
    expect(context.flags).toBe('01');
    const trace = await spansOf(context.traceId, 1);
    expect(trace.server.parentSpanId).toBe('');
    expect(trace.server.attributes['url.path']).toBe('/web/malformed');
  });

  it('reads two traceparents as none, and drops a malformed tracestate while continuing the trace', async () => {
    const twice = await request(`http://127.0.0.1:${tracedPort}/web/twice`, {
      dispatcher: agent,
      headers: [
        'host',
        'shop.example.com',
        'traceparent',
        `00-${'1'.repeat(32)}-${CALLER_SPAN}-01`,
        'traceparent',
        `00-${'2'.repeat(32)}-${CALLER_SPAN}-01`,
      ],
    });
    expect(twice.statusCode).toBe(200);
    const twiceContext = upstreamContext((await twice.body.json()) as EchoResponse);
    expect(['1'.repeat(32), '2'.repeat(32)]).not.toContain(twiceContext.traceId);
    expect((await spansOf(twiceContext.traceId, 1)).server.parentSpanId).toBe('');

    const traceId = '3'.repeat(32);
    const { status, echo } = await send(tracedPort, '/web/bad-state', {
      traceparent: `00-${traceId}-${CALLER_SPAN}-01`,
      tracestate: 'congo=t61rcWkgMzE,Not A Member',
    });
    expect(status).toBe(200);
    expect(upstreamContext(echo).traceId).toBe(traceId);
    expect(echo.headers.Tracestate).toBeUndefined();
    expect((await spansOf(traceId, 1)).server.parentSpanId).toBe(CALLER_SPAN);
  });

  it("follows a caller's decision not to sample, and records nothing for answers of its own", async () => {
    const unsampled = '8'.repeat(32);
    const { status, echo } = await send(tracedPort, '/web/unsampled', {
      traceparent: `00-${unsampled}-${CALLER_SPAN}-00`,
    });
    expect(status).toBe(200);
    const context = upstreamContext(echo);
    expect(context.traceId).toBe(unsampled);
    expect(context.flags).toBe('00');
    const unrouted = '9'.repeat(32);
    const res = await request(`http://127.0.0.1:${tracedPort}/nowhere`, {
      dispatcher: agent,
      headers: { host: 'shop.example.com', traceparent: `00-${unrouted}-${CALLER_SPAN}-01` },
    });
    await res.body.text();
    expect(res.statusCode).toBe(404);
    // Spans are exported in the order they end: once a later request's trace is in, theirs would be too.
    const later = await send(tracedPort, '/web/later');
    await spansOf(upstreamContext(later.echo).traceId, 1);
    expect(receiver.spans.filter((s) => s.traceId === unsampled || s.traceId === unrouted)).toEqual([]);
  });

  it("traces a request on Node's HTTP/2 server path (prior knowledge) too", async () => {
    const session = connect(`http://127.0.0.1:${tracedPort}`);
    try {
      const traceId = 'a'.repeat(32);
      const stream = session.request({
        ':path': '/web/h2?x=1',
        ':authority': 'shop.example.com',
        traceparent: `00-${traceId}-${CALLER_SPAN}-01`,
      });
      const [headers, body] = await Promise.all([
        new Promise<IncomingHttpHeaders>((resolve) => stream.once('response', resolve)),
        text(stream),
      ]);
      expect(headers[':status']).toBe(200);
      expect(upstreamContext(JSON.parse(body) as EchoResponse).traceId).toBe(traceId);
      const { server, clients } = await spansOf(traceId, 1);
      expect(server.name).toBe('GET shop/web');
      expect(server.attributes).toMatchObject({
        'network.protocol.version': '2',
        'server.address': 'shop.example.com',
        'url.path': '/web/h2',
        'http.response.status_code': 200,
      });
      expect(clients[0]!.parentSpanId).toBe(server.spanId);
    } finally {
      session.close();
    }
  });

  it('shows a spill as two client spans: the refused near endpoint, then the far one with why', async () => {
    const { status, echo } = await send(tracedPort, '/spill', {
      traceparent: `00-${'5'.repeat(32)}-${CALLER_SPAN}-01`,
    });
    expect(status).toBe(200);
    expect(echo.pod).toBe('far-1');
    const { server, clients } = await spansOf('5'.repeat(32), 2);
    const [near, far] = clients as [ReceivedSpan, ReceivedSpan];
    expect(near.parentSpanId).toBe(server.spanId);
    expect(far.parentSpanId).toBe(server.spanId);
    expect(near.attributes).toMatchObject({
      'clusterset_gateway.attempt': 1,
      'clusterset_gateway.cluster': 'hub',
      'clusterset_gateway.zone': 'zone-a',
      'clusterset_gateway.pod': 'near-1',
      'clusterset_gateway.tier': 0,
      'server.port': deadPort,
      'error.type': 'refused',
      'clusterset_gateway.outcome': 'refused',
    });
    expect(near.statusCode).toBe(2);
    expect(near.attributes['http.request.resend_count']).toBeUndefined();
    expect(far.attributes).toMatchObject({
      'clusterset_gateway.attempt': 2,
      'http.request.resend_count': 1,
      'clusterset_gateway.retry.reason': 'connect-failure',
      'clusterset_gateway.cluster': 'west',
      'clusterset_gateway.zone': 'zone-w',
      'clusterset_gateway.pod': 'far-1',
      'http.response.status_code': 200,
      'clusterset_gateway.outcome': 'response',
    });
    expect(Number(far.attributes['clusterset_gateway.tier'])).toBeGreaterThan(0);
    expect(far.spanId).toBe(upstreamContext(echo).parentId);
    expect(server.attributes).toMatchObject({
      'clusterset_gateway.attempts': 2,
      'clusterset_gateway.cluster': 'west',
      'clusterset_gateway.zone': 'zone-w',
      'http.response.status_code': 200,
    });
  });

  it("shows a route's status retry as a second client span with resend_count and retry.reason", async () => {
    const res = await request(`http://127.0.0.1:${tracedPort}/status/503`, {
      dispatcher: agent,
      headers: { host: 'shop.example.com', traceparent: `00-${'6'.repeat(32)}-${CALLER_SPAN}-01` },
    });
    await res.body.text();
    expect(res.statusCode).toBe(503);
    const { server, clients } = await spansOf('6'.repeat(32), 2);
    const [first, second] = clients as [ReceivedSpan, ReceivedSpan];
    expect(first.attributes).toMatchObject({ 'http.response.status_code': 503, 'error.type': '503' });
    expect(second.attributes).toMatchObject({
      'http.request.resend_count': 1,
      'clusterset_gateway.retry.reason': 'retriable-status',
      'http.response.status_code': 503,
    });
    expect(server.attributes).toMatchObject({ 'http.response.status_code': 503, 'error.type': '503' });
    expect(server.statusCode).toBe(2);
  });

  it('names a method outside the known set _OTHER and keeps the original beside it', async () => {
    const { status, echo } = await send(tracedPort, '/web/purge', {}, 'PURGE');
    expect(status).toBe(200);
    const { server } = await spansOf(upstreamContext(echo).traceId, 1);
    expect(server.name).toBe('_OTHER shop/web');
    expect(server.attributes).toMatchObject({
      'http.request.method': '_OTHER',
      'http.request.method_original': 'PURGE',
    });
  });

  it('never lets a failing collector touch a request, and counts the spans it costs', async () => {
    await eventually(async () => {
      expect(await metric(traced, 'clusterset_gateway_trace_spans_exported_total')).toBeGreaterThan(0);
      expect(await metric(traced, 'clusterset_gateway_trace_spans_queued')).toBe(0);
    }, 10_000);
    const failed = 'clusterset_gateway_trace_spans_dropped_total{reason="export-failed"}';
    const failedBefore = await metric(traced, failed);
    receiver.failWith = 503;
    const exportsBefore = receiver.exports;
    try {
      for (let i = 0; i < 5; i++) {
        const { status } = await send(tracedPort, `/web/during-outage-${i}`);
        expect(status).toBe(200);
      }
      await eventually(async () => {
        expect(receiver.exports).toBeGreaterThan(exportsBefore);
        // Five requests, a server and a client span each.
        expect((await metric(traced, failed)) - failedBefore).toBeGreaterThanOrEqual(10);
        // The log comes through a pipe, maybe after /metrics answered.
        expect(traced.output()).toContain('trace export failing');
      }, 10_000);
    } finally {
      receiver.failWith = undefined;
    }
    // The collector is back: the next spans reach it and the log says so.
    const { echo } = await send(tracedPort, '/web/after-outage');
    await spansOf(upstreamContext(echo).traceId, 1);
    await eventually(async () => expect(traced.output()).toContain('trace export recovered'), 10_000);
  });

  it('places every client span within its server span in time', async () => {
    // The traces the tests above found, a dozen or so: a millisecond's skew shows in one of them at least.
    expect(whole.length).toBeGreaterThanOrEqual(10);
    const outside = whole.flatMap(({ server, clients }) =>
      clients.filter((client) => client.startNs < server.startNs || client.endNs > server.endNs),
    );
    expect(outside).toEqual([]);
  });

  it('without --otlp-endpoint passes the caller trace context on as it came and exports nothing', async () => {
    const traceparent = `00-${'7'.repeat(32)}-${CALLER_SPAN}-01`;
    const { status, echo } = await send(untracedPort, '/web/untraced', {
      traceparent,
      tracestate: TRACESTATE,
    });
    expect(status).toBe(200);
    expect(echo.headers.Traceparent).toEqual([traceparent]);
    expect(echo.headers.Tracestate).toEqual([TRACESTATE]);
    const plain = await send(untracedPort, '/web/untraced-plain');
    expect(plain.echo.headers.Traceparent).toBeUndefined();
    const metrics = (await untraced.adminGet('/metrics')).body;
    expect(metrics).toContain('clusterset_gateway_');
    expect(metrics).not.toContain('clusterset_gateway_trace_spans');
    expect(receiver.spans.filter((s) => s.traceId === '7'.repeat(32))).toEqual([]);
  });
});
