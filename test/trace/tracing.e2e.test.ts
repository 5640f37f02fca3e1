import { connect, type IncomingHttpHeaders } from 'node:http2';
import { text } from 'node:stream/consumers';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EchoResponse } from '../../src/demo/echo/echo-server.ts';
import { eventually } from '../support/gateway-process.ts';
import type { ReceivedSpan } from '../support/otlp-receiver.ts';
import { CALLER_SPAN, NS, START_TIMEOUT_MS, TRACESTATE, TracedGateways } from './traced-gateways.ts';

/**
 * docs/tracing.md as a user sees it: a real gateway exporting to a real OTLP/HTTP collector (test/support's
 * receiver), real echo backends that say which trace context reached them, and the gateway's /metrics; and the
 * same gateway without --otlp-endpoint. traced-gateways.ts has the setup.
 */
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('tracing end to end (docs/tracing.md)', () => {
  let gw: TracedGateways;

  beforeAll(async () => {
    gw = await TracedGateways.start();
  }, START_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    await gw?.stop();
  });

  it("continues the caller's trace: a server span, a client span under it, and the backend under that", async () => {
    const { status, echo } = await gw.send(gw.tracedPort, '/web/items?token=secret', {
      traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`,
      tracestate: TRACESTATE,
    });
    expect(status).toBe(200);
    const upstream = gw.upstreamContext(echo);
    expect(upstream.traceId).toBe(TRACE_ID);
    expect(upstream.flags).toBe('01');
    expect(echo.headers.Tracestate).toEqual([TRACESTATE]);

    const { server, clients } = await gw.spansOf(TRACE_ID, 1);
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
      'server.port': gw.tracedPort,
      'network.peer.address': '127.0.0.1',
      'network.protocol.version': '1.1',
      'http.response.status_code': 200,
      'clusterset_gateway.route': 'shop/web',
      'clusterset_gateway.gateway': 'shop/edge',
      'clusterset_gateway.attempts': 1,
      'clusterset_gateway.cluster': 'hub',
      'clusterset_gateway.outcome': 'response',
    });
    expect(server.attributes['clusterset_gateway.backend']).toBe('Service/shop/web:80');
    expect(server.resource).toMatchObject({
      'telemetry.sdk.language': 'nodejs',
      'telemetry.sdk.name': 'opentelemetry',
    });
    const servedBy = gw.echoes.find((e) => e.identity.pod === echo.pod)!;
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
    const fresh = await gw.send(gw.tracedPort, '/web/fresh');
    expect(fresh.status).toBe(200);
    const freshContext = gw.upstreamContext(fresh.echo);
    expect(freshContext.flags).toBe('01');
    const freshTrace = await gw.spansOf(freshContext.traceId, 1);
    expect(freshTrace.server.parentSpanId).toBe('');
    expect(freshTrace.clients[0]!.spanId).toBe(freshContext.parentId);

    // Upper-case hex is not a valid traceparent: a new trace, never an error.
    const malformedId = TRACE_ID.toUpperCase().replace('4BF', 'ABF');
    const malformed = await gw.send(gw.tracedPort, '/web/malformed', {
      traceparent: `00-${malformedId}-${CALLER_SPAN}-01`,
      tracestate: TRACESTATE,
    });
    expect(malformed.status).toBe(200);
    const context = gw.upstreamContext(malformed.echo);
    expect(context.traceId).not.toBe(malformedId.toLowerCase());
    expect(context.traceId).not.toBe(freshContext.traceId);
    expect(context.flags).toBe('01');
    const trace = await gw.spansOf(context.traceId, 1);
    expect(trace.server.parentSpanId).toBe('');
    expect(trace.server.attributes['url.path']).toBe('/web/malformed');
  });

  it('reads two traceparents as none, and drops a malformed tracestate while continuing the trace', async () => {
    const twice = await request(`http://127.0.0.1:${gw.tracedPort}/web/twice`, {
      dispatcher: gw.agent,
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
    const twiceContext = gw.upstreamContext((await twice.body.json()) as EchoResponse);
    expect(['1'.repeat(32), '2'.repeat(32)]).not.toContain(twiceContext.traceId);
    expect((await gw.spansOf(twiceContext.traceId, 1)).server.parentSpanId).toBe('');

    const traceId = '3'.repeat(32);
    const { status, echo } = await gw.send(gw.tracedPort, '/web/bad-state', {
      traceparent: `00-${traceId}-${CALLER_SPAN}-01`,
      tracestate: 'congo=t61rcWkgMzE,Not A Member',
    });
    expect(status).toBe(200);
    expect(gw.upstreamContext(echo).traceId).toBe(traceId);
    expect(echo.headers.Tracestate).toBeUndefined();
    expect((await gw.spansOf(traceId, 1)).server.parentSpanId).toBe(CALLER_SPAN);
  });

  it("follows a caller's decision not to sample, and records nothing for answers of its own", async () => {
    const unsampled = '8'.repeat(32);
    const { status, echo } = await gw.send(gw.tracedPort, '/web/unsampled', {
      traceparent: `00-${unsampled}-${CALLER_SPAN}-00`,
    });
    expect(status).toBe(200);
    const context = gw.upstreamContext(echo);
    expect(context.traceId).toBe(unsampled);
    expect(context.flags).toBe('00');
    const unrouted = '9'.repeat(32);
    const res = await request(`http://127.0.0.1:${gw.tracedPort}/nowhere`, {
      dispatcher: gw.agent,
      headers: { host: 'shop.example.com', traceparent: `00-${unrouted}-${CALLER_SPAN}-01` },
    });
    await res.body.text();
    expect(res.statusCode).toBe(404);
    // Spans are exported in the order they end: once a later request's trace is in, theirs would be too.
    const later = await gw.send(gw.tracedPort, '/web/later');
    await gw.spansOf(gw.upstreamContext(later.echo).traceId, 1);
    expect(gw.receiver.spans.filter((s) => s.traceId === unsampled || s.traceId === unrouted)).toEqual([]);
  });

  it("traces a request on Node's HTTP/2 server path (prior knowledge) too", async () => {
    const session = connect(`http://127.0.0.1:${gw.tracedPort}`);
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
      expect(gw.upstreamContext(JSON.parse(body) as EchoResponse).traceId).toBe(traceId);
      const { server, clients } = await gw.spansOf(traceId, 1);
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

  it('traces a call through the east-west listener, named by its method alone (no route)', async () => {
    const traceId = 'b'.repeat(32);
    const res = await request(`http://127.0.0.1:${gw.eastWestPort}/api/x?y=1`, {
      dispatcher: gw.agent,
      headers: { host: `api.${NS}.svc.clusterset.local`, traceparent: `00-${traceId}-${CALLER_SPAN}-01` },
    });
    const echo = (await res.body.json()) as EchoResponse;
    expect(res.statusCode).toBe(200);
    expect(echo.pod).toBe('far-1');
    expect(gw.upstreamContext(echo).traceId).toBe(traceId);
    const { server, clients } = await gw.spansOf(traceId, 1);
    expect(server.name).toBe('GET');
    expect(server.parentSpanId).toBe(CALLER_SPAN);
    expect(server.attributes).toMatchObject({
      'clusterset_gateway.gateway': 'east-west',
      'clusterset_gateway.backend': `ServiceImport/${NS}/api:80`,
      'server.address': `api.${NS}.svc.clusterset.local`,
      'url.path': '/api/x',
      'http.response.status_code': 200,
      'clusterset_gateway.cluster': 'west',
    });
    expect(server.attributes['clusterset_gateway.route']).toBeUndefined();
    expect(clients[0]!.parentSpanId).toBe(server.spanId);
    expect(clients[0]!.spanId).toBe(gw.upstreamContext(echo).parentId);
  });

  it("sends a mirror's copy with the caller's trace context as it came", async () => {
    const traceparent = `00-${'c'.repeat(32)}-${CALLER_SPAN}-01`;
    const { status, echo } = await gw.send(gw.tracedPort, '/mirror', { traceparent, tracestate: TRACESTATE });
    expect(status).toBe(200);
    expect(gw.upstreamContext(echo).parentId).not.toBe(CALLER_SPAN);
    await eventually(async () => expect(gw.mirrored).toContainEqual({ traceparent, tracestate: TRACESTATE }));
  });

  it('shows a spill as two client spans: the refused near endpoint, then the far one with why', async () => {
    const { status, echo } = await gw.send(gw.tracedPort, '/spill', {
      traceparent: `00-${'5'.repeat(32)}-${CALLER_SPAN}-01`,
    });
    expect(status).toBe(200);
    expect(echo.pod).toBe('far-1');
    const { server, clients } = await gw.spansOf('5'.repeat(32), 2);
    const [near, far] = clients as [ReceivedSpan, ReceivedSpan];
    expect(near.parentSpanId).toBe(server.spanId);
    expect(far.parentSpanId).toBe(server.spanId);
    expect(near.attributes).toMatchObject({
      'clusterset_gateway.attempt': 1,
      'clusterset_gateway.cluster': 'hub',
      'clusterset_gateway.zone': 'zone-a',
      'clusterset_gateway.pod': 'near-1',
      'clusterset_gateway.tier': 0,
      'clusterset_gateway.tier.name': 'zone',
      'clusterset_gateway.backend': 'ServiceImport/shop/spill:80',
      'server.port': gw.deadPort,
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
    expect(far.attributes['clusterset_gateway.tier.name']).toBe('clusterset');
    expect(far.spanId).toBe(gw.upstreamContext(echo).parentId);
    expect(server.attributes).toMatchObject({
      'clusterset_gateway.attempts': 2,
      'clusterset_gateway.cluster': 'west',
      'clusterset_gateway.zone': 'zone-w',
      'http.response.status_code': 200,
    });
  });

  it("shows a route's status retry as a second client span with resend_count and retry.reason", async () => {
    const res = await request(`http://127.0.0.1:${gw.tracedPort}/status/503`, {
      dispatcher: gw.agent,
      headers: { host: 'shop.example.com', traceparent: `00-${'6'.repeat(32)}-${CALLER_SPAN}-01` },
    });
    await res.body.text();
    expect(res.statusCode).toBe(503);
    const { server, clients } = await gw.spansOf('6'.repeat(32), 2);
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
    const { status, echo } = await gw.send(gw.tracedPort, '/web/purge', {}, 'PURGE');
    expect(status).toBe(200);
    const { server } = await gw.spansOf(gw.upstreamContext(echo).traceId, 1);
    expect(server.name).toBe('_OTHER shop/web');
    expect(server.attributes).toMatchObject({
      'http.request.method': '_OTHER',
      'http.request.method_original': 'PURGE',
    });
  });

  it('never lets a failing collector touch a request, and counts the spans it costs', async () => {
    await eventually(async () => {
      expect(await gw.metric(gw.traced, 'clusterset_gateway_trace_spans_exported_total')).toBeGreaterThan(0);
      expect(await gw.metric(gw.traced, 'clusterset_gateway_trace_spans_queued')).toBe(0);
    }, 10_000);
    const failed = 'clusterset_gateway_trace_spans_dropped_total{reason="export-failed"}';
    const failedBefore = await gw.metric(gw.traced, failed);
    gw.receiver.failWith = 503;
    const exportsBefore = gw.receiver.exports;
    try {
      for (let i = 0; i < 5; i++) {
        const { status } = await gw.send(gw.tracedPort, `/web/during-outage-${i}`);
        expect(status).toBe(200);
      }
      await eventually(async () => {
        expect(gw.receiver.exports).toBeGreaterThan(exportsBefore);
        // Five requests, a server and a client span each.
        expect((await gw.metric(gw.traced, failed)) - failedBefore).toBeGreaterThanOrEqual(10);
        // The log comes through a pipe, maybe after /metrics answered.
        expect(gw.traced.output()).toContain('trace export failing');
      }, 10_000);
    } finally {
      gw.receiver.failWith = undefined;
    }
    // The collector is back: the next spans reach it and the log says so.
    const { echo } = await gw.send(gw.tracedPort, '/web/after-outage');
    await gw.spansOf(gw.upstreamContext(echo).traceId, 1);
    await eventually(async () => expect(gw.traced.output()).toContain('trace export recovered'), 10_000);
  });

  it('places every client span within its server span in time', async () => {
    // The traces the tests above found, a dozen or so: a millisecond's skew shows in one of them at least.
    expect(gw.whole.length).toBeGreaterThanOrEqual(10);
    const outside = gw.whole.flatMap(({ server, clients }) =>
      clients.filter((client) => client.startNs < server.startNs || client.endNs > server.endNs),
    );
    expect(outside).toEqual([]);
  });

  it('without --otlp-endpoint passes the caller trace context on as it came and exports nothing', async () => {
    const traceparent = `00-${'7'.repeat(32)}-${CALLER_SPAN}-01`;
    const { status, echo } = await gw.send(gw.untracedPort, '/web/untraced', {
      traceparent,
      tracestate: TRACESTATE,
    });
    expect(status).toBe(200);
    expect(echo.headers.Traceparent).toEqual([traceparent]);
    expect(echo.headers.Tracestate).toEqual([TRACESTATE]);
    const plain = await gw.send(gw.untracedPort, '/web/untraced-plain');
    expect(plain.echo.headers.Traceparent).toBeUndefined();
    const metrics = (await gw.untraced.adminGet('/metrics')).body;
    expect(metrics).toContain('clusterset_gateway_');
    expect(metrics).not.toContain('clusterset_gateway_trace_spans');
    expect(gw.receiver.spans.filter((s) => s.traceId === '7'.repeat(32))).toEqual([]);
  });
});
