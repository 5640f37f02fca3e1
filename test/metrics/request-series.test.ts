import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ProxyMetrics } from '../../src/proxy/compile/proxy-metrics.ts';

/** The sample lines of one metric family in the exposition text, without HELP and TYPE. */
function samples(text: string, family: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(family) && !line.startsWith('#'));
}

describe('request series', () => {
  it('shows a route in /metrics only once it has answered something', async () => {
    const registry = new Registry();
    const metrics = new ProxyMetrics(registry);
    metrics.requestSeries('gw', 'ns/quiet', '');
    const busy = metrics.requestSeries('gw', 'ns/busy', 'Service/ns/api:80');
    let text = await registry.metrics();
    expect(samples(text, 'clusterset_gateway_requests_total')).toEqual([]);
    expect(text).toContain('# TYPE clusterset_gateway_request_duration_seconds histogram');

    busy.record(200, 0.003);
    text = await registry.metrics();
    expect(text).not.toContain('route="ns/quiet"');
    expect(samples(text, 'clusterset_gateway_requests_total')).toEqual([
      'clusterset_gateway_requests_total{gateway="gw",route="ns/busy",backend="Service/ns/api:80",code="200"} 1',
    ]);
  });

  it('counts every status code in its own series, however they interleave', async () => {
    const registry = new Registry();
    const series = new ProxyMetrics(registry).requestSeries('gw', 'ns/r', 'b');
    const codes = [200, 200, 503, 200, 404, 404, 503, 200];
    for (const code of codes) series.record(code, 0.001);
    const text = await registry.metrics();
    const counted = samples(text, 'clusterset_gateway_requests_total').map((line) => [
      line.match(/code="(\d+)"/)?.[1],
      line.split(' ').at(-1),
    ]);
    expect(Object.fromEntries(counted)).toEqual({ '200': '4', '404': '2', '503': '2' });
    expect(text).toContain(
      'clusterset_gateway_request_duration_seconds_count{gateway="gw",route="ns/r",backend="b"} 8',
    );
  });

  it('puts each duration in its bucket, cumulatively, with sum and count', async () => {
    const registry = new Registry();
    const series = new ProxyMetrics(registry).requestSeries('gw', 'ns/r', 'b');
    for (const seconds of [0.0004, 0.003, 0.003, 0.2, 30]) series.record(200, seconds);
    const text = await registry.metrics();
    const bucket = (le: string) =>
      text.match(new RegExp(`_bucket\\{le="${le}",gateway="gw",route="ns/r",backend="b"\\} (\\S+)`))?.[1];
    expect(bucket('0.0005')).toBe('1');
    expect(bucket('0.0025')).toBe('1');
    expect(bucket('0.005')).toBe('3');
    expect(bucket('0.25')).toBe('4');
    expect(bucket('10')).toBe('4');
    expect(bucket('\\+Inf')).toBe('5');
    expect(text).toMatch(/_sum\{gateway="gw",route="ns\/r",backend="b"\} 30\.2064/);
  });

  it('upstream series of a backend gone from the table, or of a cluster and zone it no longer has, leave /metrics', async () => {
    const registry = new Registry();
    const metrics = new ProxyMetrics(registry);
    metrics.upstreamSeries('Service/ns/api:80', 'east', 'a').record('success', 0.001);
    metrics.upstreamSeries('Service/ns/api:80', 'west', 'b').record('success', 0.001);
    metrics.upstreamSeries('Service/ns/gone:80', 'east', 'a').record('success', 0.001);
    const endpoint = {
      key: 'k:1',
      address: 'k',
      port: 1,
      cluster: 'east',
      zone: 'a',
      ready: true,
      weight: 1,
    };
    metrics.beginCompile();
    metrics.retain({
      ports: [],
      backends: {
        'Service/ns/api:80': {
          id: 'Service/ns/api:80',
          kind: 'Service',
          namespace: 'ns',
          name: 'api',
          port: 80,
          protocol: 'http1',
          trafficDistribution: 'Default',
          tiers: [[endpoint]],
        },
      },
    });
    const text = await registry.metrics();
    expect(samples(text, 'clusterset_gateway_upstream_requests_total')).toEqual([
      'clusterset_gateway_upstream_requests_total{backend="Service/ns/api:80",cluster="east",zone="a",result="success"} 1',
    ]);
    expect(text).not.toContain('cluster="west"');
    expect(text).not.toContain('ns/gone');
  });

  it('after endpoint sets are replaced in place, only those backends lose their gone clusters’ series', async () => {
    const registry = new Registry();
    const metrics = new ProxyMetrics(registry);
    metrics.upstreamSeries('Service/ns/api:80', 'east', 'a').record('success', 0.001);
    metrics.upstreamSeries('Service/ns/api:80', 'west', 'b').record('success', 0.001);
    metrics.upstreamSeries('Service/ns/web:80', 'west', 'b').record('success', 0.001);
    metrics.retainUpstreamOf([
      {
        id: 'Service/ns/api:80',
        kind: 'Service',
        namespace: 'ns',
        name: 'api',
        port: 80,
        protocol: 'http1',
        trafficDistribution: 'Default',
        tiers: [[{ key: 'k:1', address: 'k', port: 1, cluster: 'east', zone: 'a', ready: true, weight: 1 }]],
      },
    ]);
    const text = await registry.metrics();
    expect(samples(text, 'clusterset_gateway_upstream_requests_total')).toEqual([
      'clusterset_gateway_upstream_requests_total{backend="Service/ns/api:80",cluster="east",zone="a",result="success"} 1',
      'clusterset_gateway_upstream_requests_total{backend="Service/ns/web:80",cluster="west",zone="b",result="success"} 1',
    ]);
  });
});
