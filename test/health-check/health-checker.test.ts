import { describe, expect, it } from 'vitest';
import { HealthChecker, type HealthCheckRuntime } from '../../src/health-check/health-checker.ts';
import type { HttpProbeTarget, ProbeResult } from '../../src/health-check/probes.ts';
import type { UpstreamEndpoint } from '../../src/ir/route-table.ts';
import { mulberry32 } from '../../src/lb/index.ts';
import { backend, endpoint, rows } from '../lb/fixtures.ts';

/** A fake clock drives the one wheel; probes answer at once with what `answer` says. */
function harness(
  answer: (target: HttpProbeTarget) => ProbeResult = () => 'success',
  maxProbesPerSecond = 0,
  servedRecently?: (key: string) => boolean,
  tunnelProbe?: (endpoint: UpstreamEndpoint) => ProbeResult,
) {
  let now = 0;
  let ticks: (() => void) | undefined;
  let timers = 0;
  const probes: { at: number; kind: string; key: string }[] = [];
  const results: { backends: readonly string[]; key: string; ok: boolean; kind: string }[] = [];
  const counted: string[] = [];
  const runtime: HealthCheckRuntime = {
    now: () => now,
    random: mulberry32(11),
    tcp: async (t) => {
      probes.push({ at: now, kind: 'tcp', key: `${t.address}:${t.port}` });
      return answer(t as HttpProbeTarget);
    },
    http: async (t) => {
      probes.push({ at: now, kind: 'http', key: `${t.address}:${t.port}${t.path}` });
      return answer(t);
    },
    ...(tunnelProbe
      ? {
          tunnel: async (e: UpstreamEndpoint, timeoutMs: number) => {
            probes.push({ at: now, kind: `tunnel/${timeoutMs}`, key: e.key });
            return tunnelProbe(e);
          },
        }
      : {}),
    every: (_ms, tick) => {
      timers++;
      ticks = tick;
      return { stop: () => (ticks = undefined) };
    },
  };
  const checker = new HealthChecker(
    { enabled: true, intervalMs: 2_000, timeoutMs: 1_000, jitterPercent: 10, maxProbesPerSecond },
    {
      result: (backends, key, ok, kind) => results.push({ backends, key, ok, kind }),
      counted: (result, kind) => counted.push(`${kind}:${result}`),
      ...(servedRecently
        ? { servedRecently: (_ids: readonly string[], key: string) => servedRecently(key) }
        : {}),
    },
    runtime,
  );
  const run = async (ms: number) => {
    for (let t = 0; t < ms; t += 25) {
      now += 25;
      ticks?.();
      await Promise.resolve();
      await Promise.resolve();
    }
  };
  return { checker, run, probes, results, counted, timers: () => timers, running: () => ticks !== undefined };
}

describe('active health checks: scheduling', () => {
  it('probes every endpoint once per interval, spread over it, on one timer', async () => {
    const h = harness();
    const cluster = backend([rows('10.0.0', 100, 'east', 'a')], 'Service/shop/web:80');
    h.checker.apply({ [cluster.id]: cluster });
    await h.run(2_000);
    expect(h.timers()).toBe(1);
    expect(new Set(h.probes.map((p) => p.key)).size).toBe(100);
    // Spread: no 100 ms window of the first interval holds more than a fifth of the probes.
    const windows = new Map<number, number>();
    for (const p of h.probes)
      windows.set(Math.floor(p.at / 100), (windows.get(Math.floor(p.at / 100)) ?? 0) + 1);
    expect(Math.max(...windows.values())).toBeLessThan(20);
    await h.run(8_000);
    // 10 s: five probes each, give or take one for the jitter.
    const perKey = new Map<string, number>();
    for (const p of h.probes) perKey.set(p.key, (perKey.get(p.key) ?? 0) + 1);
    for (const n of perKey.values()) expect(n).toBeGreaterThanOrEqual(4);
    for (const n of perKey.values()) expect(n).toBeLessThanOrEqual(6);
  });

  it('one probe for an endpoint shared by two backends, reported to both', async () => {
    const h = harness(() => 'failure');
    const a = backend([rows('10.0.0', 1, 'east')], 'Service/shop/a:80');
    const b = backend([rows('10.0.0', 1, 'east')], 'ServiceImport/shop/a:80');
    h.checker.apply({ [a.id]: a, [b.id]: b });
    await h.run(2_100);
    expect(h.probes).toHaveLength(1);
    expect(h.results).toEqual([{ backends: [a.id, b.id], key: '10.0.0-0:8080', ok: false, kind: 'tcp' }]);
    expect(h.counted).toEqual(['tcp:failure']);
  });

  it('HTTP probes by annotation; off disables; local errors count for nobody', async () => {
    const h = harness((t) => (t.path === '/ready' ? 'local' : 'success'));
    const httpBackend = {
      ...backend([rows('10.0.1', 1, 'east')], 'Service/shop/h:80'),
      healthCheck: { kind: 'http' as const, path: '/ready', intervalMs: 500 },
    };
    const off = {
      ...backend([rows('10.0.2', 3, 'east')], 'Service/shop/off:80'),
      healthCheck: { disabled: true },
    };
    h.checker.apply({ [httpBackend.id]: httpBackend, [off.id]: off });
    expect(h.checker.targetCount).toBe(1);
    await h.run(2_000);
    expect(h.probes.every((p) => p.kind === 'http' && p.key.endsWith('/ready'))).toBe(true);
    expect(h.probes.length).toBeGreaterThanOrEqual(3);
    expect(h.results).toEqual([]);
    expect(h.counted.every((c) => c === 'http:local')).toBe(true);
  });

  function mixedBackend() {
    const local = endpoint(rows('10.0.1', 1, 'east')[0]!);
    const tunnel: UpstreamEndpoint = {
      ...local,
      key: 'west@203.0.113.7:15008',
      address: '203.0.113.7',
      port: 15008,
      cluster: 'west',
      tunnel: { authority: 'h.shop.svc.clusterset.local:80' },
    };
    const mixed = {
      ...backend([], 'ServiceImport/shop/h:80'),
      tiers: [[local, tunnel]],
      healthCheck: { kind: 'http' as const, path: '/ready', intervalMs: 500 },
    };
    return { local, tunnel, mixed };
  }

  it("without a network identity, another network's gateway is probed by TCP even when the backend asks for HTTP", async () => {
    const h = harness();
    const { local, mixed } = mixedBackend();
    h.checker.apply({ [mixed.id]: mixed });
    await h.run(2_000);
    expect(new Set(h.probes.map((p) => `${p.kind} ${p.key}`))).toEqual(
      new Set([`http ${local.address}:${local.port}/ready`, 'tcp 203.0.113.7:15008']),
    );
  });

  it("with a network identity, another network's gateway is probed by its mutual-TLS handshake, and a refused one goes down", async () => {
    const h = harness(undefined, 0, undefined, () => 'failure');
    const { local, tunnel, mixed } = mixedBackend();
    h.checker.apply({ [mixed.id]: mixed });
    await h.run(2_000);
    expect(new Set(h.probes.map((p) => `${p.kind} ${p.key}`))).toEqual(
      new Set([`http ${local.address}:${local.port}/ready`, `tunnel/1000 ${tunnel.key}`]),
    );
    expect(h.results).toContainEqual({ backends: [mixed.id], key: tunnel.key, ok: false, kind: 'tcp' });
    expect(h.results.some((r) => r.key === local.key && !r.ok)).toBe(false);
  });

  it('an endpoint-only change of one backend adds and drops just its probes; shared endpoints stay', async () => {
    const h = harness();
    const web = backend([rows('10.0.0', 2, 'east')], 'Service/shop/web:80');
    const api = backend([rows('10.0.0', 1, 'east')], 'Service/shop/api:80');
    h.checker.apply({ [web.id]: web, [api.id]: api });
    expect(h.checker.targetCount).toBe(2);
    // web moves from 10.0.0-0 and 10.0.0-1 to 10.0.9-0; api still names 10.0.0-0.
    const moved = backend([rows('10.0.9', 1, 'east')], web.id);
    h.checker.replaceBackends([{ previous: web, next: moved }]);
    expect(h.checker.targetCount).toBe(2);
    h.probes.length = 0;
    await h.run(4_000);
    expect(new Set(h.probes.map((p) => p.key))).toEqual(new Set(['10.0.0-0:8080', '10.0.9-0:8080']));
    const shared = h.results.filter((r) => r.key === '10.0.0-0:8080');
    expect(shared.length).toBeGreaterThan(0);
    expect(shared.every((r) => r.backends.length === 1 && r.backends[0] === api.id)).toBe(true);
  });

  it('a new table keeps the schedule of endpoints still there and stops probing removed ones', async () => {
    const h = harness();
    const first = backend([rows('10.0.0', 2, 'east')], 'Service/shop/web:80');
    h.checker.apply({ [first.id]: first });
    await h.run(2_000);
    const second = backend([rows('10.0.0', 1, 'east')], 'Service/shop/web:80');
    h.checker.apply({ [second.id]: second });
    h.probes.length = 0;
    await h.run(4_000);
    expect(new Set(h.probes.map((p) => p.key))).toEqual(new Set(['10.0.0-0:8080']));
    h.checker.apply({});
    expect(h.running()).toBe(false);
  });
});

describe('active health checks: probe budget and passive evidence', () => {
  it('beyond the budget, passing endpoints are probed less often; failing ones keep the interval', async () => {
    const failing = '10.0.0-0:8080';
    const h = harness((t) => (`${t.address}:${t.port}` === failing ? 'failure' : 'success'), 100);
    const cluster = backend([rows('10.0.0', 1_000, 'east')], 'Service/shop/web:80');
    h.checker.apply({ [cluster.id]: cluster });
    expect(h.checker.stretch).toBe(5); // 1,000 endpoints / 2 s = 500 probes/s against a budget of 100
    await h.run(4_000); // every endpoint probed once (first round spread over 2 s)
    h.probes.length = 0;
    await h.run(20_000);
    const rate = h.probes.length / 20;
    expect(rate).toBeGreaterThan(80);
    expect(rate).toBeLessThan(125);
    expect(h.probes.filter((p) => p.key === failing).length).toBeGreaterThanOrEqual(9);
  });

  it('an endpoint that just served traffic is not probed this round', async () => {
    const h = harness(
      () => 'success',
      0,
      (key) => key === '10.0.0-0:8080',
    );
    const cluster = backend([rows('10.0.0', 2, 'east')], 'Service/shop/web:80');
    h.checker.apply({ [cluster.id]: cluster });
    await h.run(10_000);
    expect(h.probes.every((p) => p.key === '10.0.0-1:8080')).toBe(true);
    expect(h.counted.filter((c) => c === 'tcp:skipped').length).toBeGreaterThanOrEqual(4);
  });
});
