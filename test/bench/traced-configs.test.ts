import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../bench/harness/cli-args.ts';
import { countOtlpSpans } from '../../bench/harness/otlp-spans.ts';
import { findScenarios } from '../../bench/harness/scenarios.ts';
import { withBaseline } from '../../bench/harness/suite.ts';
import { derive } from '../../bench/harness/summarize.ts';
import { gatewayTraceCounters, traceFinding } from '../../bench/harness/trace-sink.ts';
import { isSelected } from '../../bench/harness/traced-configs.ts';
import { measuredRow } from './measured-row.ts';

const UPSTREAM = [{ address: '127.0.0.1', port: 9 }];

function smallConfigs(only: readonly string[]) {
  const [small] = findScenarios(['small']);
  return (small?.configs(UPSTREAM) ?? []).filter((c) => isSelected(c, only));
}

describe('traced gateway configs (issue 46)', () => {
  it('are measured only when --config names them', () => {
    expect(smallConfigs([]).map((c) => c.id)).toEqual([
      'direct',
      'gateway',
      'nginx',
      'haproxy',
      'http-proxy',
      'undici',
      'splice',
    ]);
    expect(smallConfigs(['gateway']).map((c) => c.id)).toEqual(['gateway']);
    const traced = smallConfigs(['direct', 'gateway', 'gateway-traced', 'gateway-traced-1pct']);
    expect(traced.map((c) => [c.id, c.kind, c.tracing?.sampleRatio])).toEqual([
      ['direct', 'direct', undefined],
      ['gateway', 'gateway', undefined],
      ['gateway-traced', 'gateway', 1],
      ['gateway-traced-1pct', 'gateway', 0.01],
    ]);
    expect(traced[2]?.label).toBe('clusterset-gateway, tracing on (ratio 1)');
    expect(traced[2]?.gateway).toEqual(traced[1]?.gateway);
  });

  it('are accepted by --config, and the results can take another name than latest', () => {
    const args = parseBenchArgs(['--config', 'gateway,gateway-traced-1pct', '--name', 'tracing']);
    expect(args.configs).toEqual(['gateway', 'gateway-traced-1pct']);
    expect(args.name).toBe('tracing');
    expect(parseBenchArgs([]).name).toBe('latest');
    expect(() => parseBenchArgs(['--config', 'gateway-traced-5pct'])).toThrow(/unknown --config/);
    expect(() => parseBenchArgs(['--name', '../latest'])).toThrow(/--name is a file name/);
  });

  it('get no baseline twin: a build from before tracing has no tracing flags', () => {
    const configs = smallConfigs(['gateway', 'gateway-traced']);
    expect(
      withBaseline(configs, { program: ['/old/dist/main.js'], name: 'abc1234' }).map((c) => c.id),
    ).toEqual(['gateway', 'gateway-baseline', 'gateway-traced']);
  });

  it('are compared with the untraced gateway of the same run', () => {
    const row = (config: string, rps: number, p99: number, rss: number) =>
      measuredRow(
        'small',
        config,
        {
          rps,
          latencyMs: { p50: 1, p99, p999: p99 * 2, max: p99 * 3, mean: 1 },
          proxyCpuCores: 1,
          proxyRssBytes: rss * 1024 * 1024,
        },
        config === 'gateway' ? 'clusterset-gateway' : 'clusterset-gateway, tracing on (ratio 1)',
      );
    const { findings } = derive({ name: 'download-64k' }, [
      row('gateway', 10_000, 10, 120),
      row('gateway-traced', 8_000, 12, 150),
    ]);
    expect(findings).toEqual([
      'wrk: clusterset-gateway, tracing on (ratio 1) against tracing off: req/s 10,000 -> 8,000 (0.80x), req/s per proxy core 10,000 -> 8,000 (0.80x), p99 10.000 ms -> 12.000 ms, p99.9 20.000 ms -> 24.000 ms, RSS 120 MiB -> 150 MiB, loop p99 n/a -> n/a, GC n/a -> n/a per s',
    ]);
  });
});

describe('the OTLP sink', () => {
  /** Protobuf by hand: a tag, then the value as its wire type wants. */
  const varint = (value: number): number[] => {
    const out: number[] = [];
    let v = value;
    while (v >= 0x80) {
      out.push((v % 128) | 0x80);
      v = Math.floor(v / 128);
    }
    out.push(v);
    return out;
  };
  const bytes = (field: number, content: number[]): number[] => [
    ...varint(field * 8 + 2),
    ...varint(content.length),
    ...content,
  ];
  const text = (field: number, value: string): number[] => bytes(field, [...Buffer.from(value)]);
  const fixed64 = (field: number): number[] => [...varint(field * 8 + 1), 1, 2, 3, 4, 5, 6, 7, 8];
  const number = (field: number, value: number): number[] => [...varint(field * 8), ...varint(value)];
  // Span: trace_id 1, span_id 2, name 5, kind 6, start 7 and end 8 (fixed64), attributes 9.
  const span = (name: string): number[] => [
    ...bytes(
      1,
      Array.from({ length: 16 }, () => 7),
    ),
    ...bytes(
      2,
      Array.from({ length: 8 }, () => 9),
    ),
    ...text(5, name),
    ...number(6, 2),
    ...fixed64(7),
    ...fixed64(8),
    ...bytes(9, [...text(1, 'url.path'), ...bytes(2, text(1, '/'.repeat(200)))]),
  ];
  // ScopeSpans: scope 1, spans 2, schema_url 3. ResourceSpans: resource 1, scope_spans 2, schema_url 3.
  const scope = (spans: number): number[] => [
    ...bytes(1, text(1, 'clusterset-gateway')),
    ...Array.from({ length: spans }, (_, i) => bytes(2, span(`GET ${i}`))).flat(),
    ...text(3, 'https://opentelemetry.io/schemas/1.26.0'),
  ];
  const resource = (scopes: readonly number[]): number[] => [
    ...bytes(1, bytes(1, [...text(1, 'service.name'), ...bytes(2, text(1, 'clusterset-gateway'))])),
    ...scopes.flatMap((n) => bytes(2, scope(n))),
  ];

  it('counts the spans of an ExportTraceServiceRequest across resources and scopes', () => {
    const request = Uint8Array.from([...bytes(1, resource([3, 2])), ...bytes(1, resource([200]))]);
    expect(countOtlpSpans(request)).toBe(205);
    expect(countOtlpSpans(new Uint8Array())).toBe(0);
  });

  it('says so when the body is not a well-formed message', () => {
    const request = [...bytes(1, resource([3]))];
    expect(countOtlpSpans(Uint8Array.from(request.slice(0, -5)))).toBeUndefined();
    expect(countOtlpSpans(Uint8Array.from([0x0f, 1, 2]))).toBeUndefined();
    expect(countOtlpSpans(Uint8Array.from([0x0a, 0xff]))).toBeUndefined();
  });

  it("reads the gateway's span and request counters and says whether the spans arrived", () => {
    const metrics = [
      '# HELP clusterset_gateway_trace_spans_exported_total Sampled spans the OTLP collector accepted.',
      'clusterset_gateway_trace_spans_exported_total 19000',
      'clusterset_gateway_trace_spans_dropped_total{reason="queue-full"} 900',
      'clusterset_gateway_trace_spans_dropped_total{reason="export-failed"} 0',
      'clusterset_gateway_trace_spans_queued 100',
      'clusterset_gateway_requests_total{gateway="bench/gw",route="bench/all",backend="b",code="200"} 9990',
      'clusterset_gateway_requests_total{gateway="bench/gw",route="bench/all",backend="b",code="502"} 10',
      'clusterset_gateway_request_duration_seconds_count{gateway="bench/gw"} 10000',
    ].join('\n');
    const counters = gatewayTraceCounters(metrics);
    expect(counters).toEqual({
      exported: 19_000,
      dropped: { 'queue-full': 900, 'export-failed': 0 },
      queued: 100,
      requests: 10_000,
    });
    const sink = { requests: 38, bytes: 9_500_000, spans: 19_000, malformed: 0 };
    expect(traceFinding('gateway traced', sink, counters)).toBe(
      'gateway traced: the OTLP sink took 19,000 spans in 38 exports (9.5 MB) over warm-up and runs; the gateway counted 19,000 exported, 900 dropped (queue-full 900), 100 queued, 2.000 sampled spans per request served (10,000 requests)',
    );
    expect(traceFinding('gateway traced', { ...sink, malformed: 2 }, undefined)).toBe(
      'gateway traced: the OTLP sink took 19,000 spans in 38 exports (9.5 MB, 2 malformed), over warm-up and runs',
    );
  });
});
