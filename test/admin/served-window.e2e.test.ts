import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ServedWindow } from '../../src/admin/served-window.ts';
import { servedKey } from '../../src/admin/topology-builder.ts';
import { ProxyMetrics } from '../../src/proxy/compile/proxy-metrics.ts';

const reading = (answered: number, failed = 0) => new Map([['k', { answered, failed }]]);

describe('ServedWindow', () => {
  it('differences the newest reading against the one at the start of the last 10 s', () => {
    const window = new ServedWindow(new Registry(), 10_000);
    expect(window.delta()).toEqual({ counts: new Map(), seconds: 0 });
    for (let s = 0; s <= 15; s++) window.record(s * 1000, reading(s * 100, s));
    // Readings at 5 s (500) and 15 s (1500).
    expect(window.delta()).toEqual({ counts: new Map([['k', { answered: 1000, failed: 10 }]]), seconds: 10 });
  });

  it('covers less than 10 s right after start, and counts from zero after a reset', () => {
    const window = new ServedWindow(new Registry(), 10_000);
    window.record(0, reading(50));
    window.record(3000, reading(80));
    expect(window.delta()).toEqual({ counts: new Map([['k', { answered: 30, failed: 0 }]]), seconds: 3 });
    window.record(4000, reading(5));
    expect(window.delta().counts.get('k')).toEqual({ answered: 5, failed: 0 });
  });

  it("reads the proxy's upstream attempt counter: answered (success, 5xx) apart from failed attempts", async () => {
    const registry = new Registry();
    const metrics = new ProxyMetrics(registry);
    const series = metrics.upstreamSeries('ServiceImport/shop/web:80', 'east-1', 'us-east-1a');
    const window = new ServedWindow(registry, 10_000);
    await window.sample(0);
    series.record('success', 0.001);
    series.record('success', 0.001);
    series.record('http5xx', 0.001);
    series.record('connect-failure', 0.001);
    series.record('timeout', 0.001);
    await window.sample(1000);
    expect(window.delta().counts.get(servedKey('ServiceImport/shop/web:80', 'east-1', 'us-east-1a'))).toEqual(
      {
        answered: 3,
        failed: 2,
      },
    );
  });
});
