import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../bench/harness/cli-args.ts';
import { parseH2loadOutput } from '../../bench/harness/h2load-load.ts';
import { findScenarios } from '../../bench/harness/scenarios.ts';
import { withBaseline } from '../../bench/harness/suite.ts';
import { derive } from '../../bench/harness/summarize.ts';
import { parseWrkOutput, wrkScript } from '../../bench/harness/wrk-load.ts';
import { summarizeProfile } from '../../bench/profile/summarize-cpuprofile.ts';
import { measuredRow } from './measured-row.ts';

const WRK_TEXT = `Running 2s test @ http://127.0.0.1:8000
  1 threads and 100 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.07ms  200.00us   1.20s    90.00%
    Req/Sec    67.13k     2.11k   70.00k    80.00%
  Latency Distribution
     50%  850.00us
     75%    1.20ms
     90%    1.35ms
     99%    1.61ms
  134252 requests in 2.00s, 30.21MB read
  Socket errors: connect 0, read 3, write 0, timeout 2
  Non-2xx or 3xx responses: 7
Requests/sec:  67126.00
Transfer/sec:     15.10MB
`;

const WRK_PER_REQUEST_OUTPUT = `Running 1s test @ http://127.0.0.1:18777/
  1 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    65.81us   96.38us   2.39ms   98.18%
    Req/Sec    54.86k     9.89k   69.25k    63.64%
  Latency Distribution
     50%   49.00us
     75%   71.00us
     90%   98.00us
     99%  213.00us
  59789 requests in 1.10s, 11.17MB read
Requests/sec:  54363.27
Transfer/sec:     10.15MB
WRK_RESULT {"requests":59789,"duration_us":1099805,"connect":0,"read":0,"write":0,"status":0,"timeout":0,"p50":49,"p99":213,"p999":1773,"max":2392,"mean":65.805704,"bytes":11707542,"u_requests":59789,"u_p50":50,"u_p99":169,"u_p999":321,"u_max":2398}
`;

describe('wrk output', () => {
  it('reads the --latency text when the Lua hook printed nothing', () => {
    const result = parseWrkOutput(WRK_TEXT);
    expect(result).toMatchObject({
      tool: 'wrk',
      requests: 134252,
      durationSec: 2,
      rps: 67126,
      errors: 5,
      non2xx: 7,
    });
    expect(result.bytesRead).toBeCloseTo(30.21 * 1024 * 1024);
    expect(result.latencyMs.p50).toBeCloseTo(0.85);
    expect(result.latencyMs.p99).toBeCloseTo(1.61);
    expect(result.latencyMs.max).toBeCloseTo(1200);
  });

  it('prefers the WRK_RESULT line for exact counts and p99.9', () => {
    const hook =
      'WRK_RESULT {"requests":1000,"duration_us":2000000,"connect":1,"read":0,"write":0,"status":4,"timeout":0,"p50":900,"p99":2500,"p999":4000,"max":9000,"mean":950.5,"bytes":123456789}';
    const result = parseWrkOutput(`${WRK_TEXT}${hook}\n`);
    expect(result).toMatchObject({ requests: 1000, rps: 500, errors: 1, non2xx: 4, bytesRead: 123456789 });
    expect(result.latencyMs).toEqual({ p50: 0.9, p99: 2.5, p999: 4, max: 9, mean: 0.9505 });
  });

  it("reads wrk's per-request times beside its corrected ones (captured from wrk 4.1 against the nginx backend)", () => {
    const result = parseWrkOutput(WRK_PER_REQUEST_OUTPUT);
    expect(result).toMatchObject({ requests: 59789, errors: 0, non2xx: 0, bytesRead: 11707542 });
    expect(result.latencyMs).toMatchObject({ p50: 0.049, p99: 0.213, p999: 1.773, max: 2.392 });
    expect(result.perRequestLatencyMs).toEqual({
      p50: 0.05,
      p99: 0.169,
      p999: 0.321,
      max: 2.398,
      requests: 59789,
    });
    expect(parseWrkOutput(WRK_TEXT).perRequestLatencyMs).toBeUndefined();
  });

  it('writes a static request for one target and a rotating one for several', () => {
    const one = wrkScript({
      origin: 'http://127.0.0.1:1',
      method: 'POST',
      targets: [{ host: 'a.test', path: '/x' }],
      bodyBytes: 10,
      connections: 1,
      durationSec: 1,
    });
    expect(one).toContain('wrk.path = "/x"');
    expect(one).toContain('wrk.body = string.rep("a", 10)');
    expect(one).not.toContain('request = function');
    expect(one).not.toContain('response = function');
    const many = wrkScript({
      origin: 'http://127.0.0.1:1',
      method: 'GET',
      targets: [
        { host: 'a.test', path: '/x' },
        { host: 'b.test', path: '/y' },
      ],
      connections: 1,
      durationSec: 1,
    });
    expect(many).toContain('{"b.test", "/y"},');
    expect(many).toContain('request = function');
    const timed = wrkScript({
      origin: 'http://127.0.0.1:1',
      method: 'GET',
      targets: [{ host: 'a.test', path: '/x' }],
      connections: 1,
      durationSec: 1,
      perRequestLatency: true,
    });
    expect(timed).toContain('wrk.headers["X-Bench-Id"] = id');
    expect(timed).toContain('response = function');
  });
});

describe('CPU profile summary', () => {
  it('ranks functions by self time and groups them by area', () => {
    const frame = (id: number, functionName: string, url: string) => ({
      id,
      callFrame: { functionName, url, lineNumber: 9, columnNumber: 0, scriptId: '1' },
    });
    const profile = {
      nodes: [
        frame(1, '(root)', ''),
        frame(2, 'lookup', 'file:///work/main/src/proxy/route-index.ts'),
        frame(3, 'request', 'file:///work/main/node_modules/undici/lib/core/request.js'),
        frame(4, '(idle)', ''),
      ],
      samples: [2, 2, 3, 4, 2],
      timeDeltas: [1000, 1000, 1000, 5000, 1000],
    };
    const text = summarizeProfile(profile, 5);
    const lines = text.split('\n');
    const top = lines.findIndex((l) => l.startsWith('top 5'));
    expect(lines[top + 1]).toMatch(/75\.0%\s+3 ms\s+lookup\s+src\/proxy\/route-index.ts:10/);
    expect(lines[top + 2]).toMatch(
      /25\.0%\s+1 ms\s+request\s+node_modules\/undici\/lib\/core\/request.js:10/,
    );
    expect(text).toMatch(/75\.0%\s+src\/proxy\n/);
    expect(text).not.toMatch(/\(idle\)/);
  });
});

describe('ratios and findings', () => {
  it('compares req/s with the same tool and derives the 10k/10 route ratio', () => {
    const row = (config: string, rps: number) => ({
      scenario: 'routes-10k',
      config,
      label: config,
      status: 'ok' as const,
      tool: 'wrk' as const,
      runs: [900, rps, 1100 * rps].map((r) => ({
        tool: 'wrk' as const,
        requests: r,
        durationSec: 1,
        rps: r,
        latencyMs: { p50: 1, p99: 2, p999: 3, max: 4, mean: 1 },
        errors: 0,
        non2xx: 0,
      })),
    });
    const { rows, findings } = derive({ name: 'routes-10k' }, [
      row('direct', 40_000),
      row('gateway-10', 10_000),
      row('gateway-10k', 9_500),
    ]);
    expect(rows.map((r) => r.rps)).toEqual([40_000, 10_000, 9_500]);
    expect(rows[1]?.ratios?.direct).toBe(0.25);
    expect(findings).toEqual([
      'wrk: 10,000 routes serve 95.0% of the req/s of 10 routes (target: within 10%)',
    ]);
  });

  it('states the per-core targets of the headline scenario', () => {
    const row = (config: string, rps: number, cores: number) => ({
      scenario: 'small',
      config,
      label: config,
      status: 'ok' as const,
      tool: 'wrk' as const,
      runs: [
        {
          tool: 'wrk' as const,
          requests: rps,
          durationSec: 1,
          rps,
          latencyMs: { p50: 1, p99: 2, p999: 3, max: 4, mean: 1 },
          errors: 0,
          non2xx: 0,
          proxyCpuCores: cores,
        },
      ],
    });
    const { rows, findings } = derive({ name: 'small' }, [
      row('gateway', 12_000, 1),
      row('nginx', 48_000, 0.8),
      row('http-proxy', 4_000, 1),
      row('undici', 10_000, 1),
      row('splice', 40_000, 1),
    ]);
    expect(rows[1]?.rpsPerProxyCore).toBe(60_000);
    expect(rows[0]?.ratios?.splicePerCore).toBe(0.3);
    expect(findings).toEqual([
      'wrk: clusterset-gateway per proxy core: 0.30x the Node TCP splice (target 0.50x), 1.20x the minimal undici proxy (target 1.5x), 3.00x http-proxy (target 2.5x), 20.0% of nginx',
    ]);
  });

  it('compares the gateway with a baseline build of itself, run after it with the same manifests', () => {
    const gateway = {
      id: 'gateway',
      kind: 'gateway' as const,
      label: 'clusterset-gateway',
      gateway: {
        routes: { kind: 'catch-all' as const },
        backend: { kind: 'service' as const, endpoint: { address: '127.0.0.1', port: 9 } },
      },
    };
    const nginx = { id: 'nginx', kind: 'nginx' as const, label: 'nginx' };
    const configs = withBaseline([gateway, nginx], { program: ['/old/dist/main.js'], name: 'abc1234' });
    expect(configs.map((c) => c.id)).toEqual(['gateway', 'gateway-baseline', 'nginx']);
    expect(configs[1]).toMatchObject({
      label: 'clusterset-gateway at abc1234 (baseline)',
      program: ['/old/dist/main.js'],
      gateway: gateway.gateway,
    });
    expect(withBaseline([gateway, nginx], undefined).map((c) => c.id)).toEqual(['gateway', 'nginx']);

    const row = (config: string, rps: number, p99: number, rss: number, gcPauseMs: number) =>
      measuredRow(
        'small',
        config,
        {
          requests: rps * 2,
          durationSec: 2,
          rps,
          latencyMs: { p50: 1, p99, p999: p99 * 2, max: p99 * 3, mean: 1 },
          proxyCpuCores: 1,
          proxyRssBytes: rss * 1024 * 1024,
          runtime: {
            loopP50Ms: 1,
            loopP99Ms: p99 / 2,
            loopMaxMs: p99,
            gcCount: 10,
            gcPauseMs,
            gcMaxPauseMs: 5,
            freedBytes: 0,
          },
        },
        config === 'gateway' ? 'clusterset-gateway' : 'clusterset-gateway at abc1234 (baseline)',
      );
    const { findings } = derive({ name: 'one-connection' }, [
      row('gateway', 15_000, 10, 120, 60),
      row('gateway-baseline', 12_000, 40, 150, 100),
    ]);
    expect(findings).toEqual([
      'wrk: clusterset-gateway against clusterset-gateway at abc1234 (baseline): req/s per proxy core 12,000 -> 15,000 (1.25x), p99 40.000 ms -> 10.000 ms, p99.9 80.000 ms -> 20.000 ms, RSS 150 MiB -> 120 MiB, loop p99 20.000 ms -> 5.000 ms, GC 50.000 ms -> 30.000 ms per s',
    ]);
  });

  it('compares one gateway process with --workers 2, unpinned, by req/s', () => {
    const [workers] = findScenarios(['workers']);
    expect(workers?.cpu).toBe('unpinned');
    const configs = workers?.configs([{ address: '127.0.0.1', port: 9 }]) ?? [];
    expect(configs.map((c) => [c.id, c.kind, c.args])).toEqual([
      ['gateway', 'gateway', undefined],
      ['gateway-2-workers', 'gateway', ['--workers', '2']],
    ]);
    const row = (config: string, rps: number, cores: number) =>
      measuredRow('workers', config, {
        rps,
        latencyMs: { p50: 1, p99: 4, p999: 5, max: 6, mean: 1 },
        proxyCpuCores: cores,
      });
    const { findings } = derive({ name: 'workers' }, [
      row('gateway', 10_000, 1),
      row('gateway-2-workers', 15_000, 1.5),
    ]);
    expect(findings).toEqual([
      'wrk: --workers 2 serves 1.50x the req/s of one process (10,000 -> 15,000; CPU 1.00 -> 1.50 cores; p99 4.000 ms -> 4.000 ms)',
    ]);
  });
});

describe('bench flags', () => {
  it('runs the gateway with npm start’s Node flags unless --node-flags says otherwise', () => {
    expect(parseBenchArgs([]).nodeFlags).toBeUndefined();
    const args = parseBenchArgs([
      '--node-flags',
      ' --max-semi-space-size=8  --single-threaded',
      '--baseline-node-flags=',
    ]);
    expect(args.nodeFlags).toEqual(['--max-semi-space-size=8', '--single-threaded']);
    expect(args.baselineNodeFlags).toEqual([]);
  });

  it('refuses a Node flag without its dashes', () => {
    expect(() => parseBenchArgs(['--node-flags', 'max-semi-space-size=8'])).toThrow(/starts with --/);
  });
});

const H2LOAD_TEXT = `finished in 3.00s, 1000.00 req/s, 95.00KB/s
requests: 3003 total, 3103 started, 3003 done, 3000 succeeded, 3 failed, 0 errored, 0 timeout
status codes: 3000 2xx, 0 3xx, 3 4xx, 0 5xx
traffic: 285.23KB (292077) total, 47.00KB (48128) headers (space savings 93.00%), 84.00KB (86016) data
`;

describe('h2load output', () => {
  it('counts 2xx answers per second and takes latencies from the per-request log', () => {
    const log = Array.from({ length: 100 }, (_, i) => `1700000000${i}\t200\t${(i + 1) * 1000}`).join('\n');
    const result = parseH2loadOutput(H2LOAD_TEXT, `${log}\n`);
    expect(result).toMatchObject({ tool: 'h2load', requests: 3000, durationSec: 3, errors: 0, non2xx: 3 });
    expect(result.rps).toBeCloseTo(1000);
    expect(result.bytesRead).toBe(292077);
    expect(result.latencyMs.p50).toBeCloseTo(50, 0);
    expect(result.latencyMs.p99).toBeCloseTo(99, 0);
    expect(result.latencyMs.max).toBeCloseTo(100, 0);
  });

  it('fails a run in which nothing was answered (a refused connection is counted nowhere)', () => {
    const none = H2LOAD_TEXT.replace(
      /requests: .*/,
      'requests: 0 total, 0 started, 0 done, 0 succeeded, 0 failed, 0 errored, 0 timeout',
    );
    expect(() => parseH2loadOutput(none, '')).toThrow(/no request answered/);
  });
});
