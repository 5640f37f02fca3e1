import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { CpuPlan } from '../../bench/harness/affinity.ts';
import { sourcePrograms } from '../../bench/harness/compiled.ts';
import type { SuiteResult } from '../../bench/harness/results.ts';
import { findScenarios } from '../../bench/harness/scenarios.ts';
import { runSuite } from '../../bench/harness/suite.ts';
import { writeResults } from '../../bench/report/write-results.ts';

const projectDir = resolve(fileURLToPath(new URL('../..', import.meta.url)));
// Nothing pinned: the smoke run checks the harness, not speed, and must not fight other tests for a core.
const unpinned: CpuPlan = {
  pinned: false,
  proxyCpus: '',
  loadCpus: '',
  cores: cpus().length,
  note: 'unpinned',
};

describe('bench harness smoke run (direct + minimal undici proxy, Node backend, autocannon, 1 s)', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('measures both configs and writes JSON, SVG and markdown', async () => {
    const lines: string[] = [];
    const result = await runSuite({
      scenarios: findScenarios(['small']),
      onlyConfigs: ['direct', 'undici'],
      tools: ['autocannon'],
      durationSec: 1,
      runs: 1,
      warmupSec: 0,
      cpu: unpinned,
      projectDir,
      programs: sourcePrograms(projectDir),
      forceNodeBackend: true,
      log: (line) => lines.push(line),
    });

    const [scenario] = result.scenarios;
    expect(scenario?.name).toBe('small');
    const rows = scenario?.rows ?? [];
    expect(rows.map((r) => [r.config, r.status, r.tool])).toEqual([
      ['direct', 'ok', 'autocannon'],
      ['undici', 'ok', 'autocannon'],
    ]);
    for (const row of rows) {
      expect(row.rps).toBeGreaterThan(0);
      expect(row.runs).toHaveLength(1);
    }
    const undici = rows.find((r) => r.config === 'undici');
    expect(undici?.ratios?.direct).toBeGreaterThan(0);
    expect(undici?.ratios?.undici).toBe(1);
    expect(undici?.rssMiB).toBeGreaterThan(0);
    // The runtime probe answered: event-loop delay, GC and allocation of the Node proxy during the run.
    expect(undici?.loopP99Ms).toBeGreaterThan(0);
    expect(undici?.allocBytesPerRequest).toBeGreaterThan(0);
    expect(rows.find((r) => r.config === 'direct')?.loopP99Ms).toBeUndefined();
    expect(lines.some((l) => l.includes('minimal undici proxy autocannon run 1/1'))).toBe(true);

    const dir = await mkdtemp(join(tmpdir(), 'bench-smoke-'));
    dirs.push(dir);
    const files = await writeResults(result, dir);
    const json = JSON.parse(await readFile(files.json, 'utf8')) as SuiteResult;
    expect(json.scenarios[0]?.rows[1]?.label).toBe('minimal undici proxy');
    const svg = await readFile(files.svg, 'utf8');
    expect(svg.startsWith('<?xml')).toBe(true);
    expect(svg).toMatch(/<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg.match(/<rect [^>]*fill="#9467bd"/g)).toHaveLength(1);
    const markdown = await readFile(files.markdown, 'utf8');
    expect(markdown).toContain('| config | tool | req/s |');
    expect(markdown).toContain('| minimal undici proxy | autocannon |');
  }, 30_000);

  it('reports a peer it cannot start as skipped with the reason', async () => {
    const result = await runSuite({
      scenarios: findScenarios(['service-import']),
      onlyConfigs: ['undici'],
      tools: ['autocannon'],
      durationSec: 1,
      runs: 1,
      warmupSec: 0,
      cpu: unpinned,
      projectDir,
      programs: sourcePrograms(projectDir),
      forceNodeBackend: true,
      log: () => {},
    });
    expect(result.scenarios[0]?.rows).toEqual([
      expect.objectContaining({
        config: 'undici',
        status: 'skipped',
        reason: 'single-target proxy: it has no way to spread load over an endpoint set',
      }),
    ]);
  }, 30_000);
  it('drives the gRPC backend with the h2c unary client (grpc-unary, direct)', async () => {
    const lines: string[] = [];
    const result = await runSuite({
      scenarios: findScenarios(['grpc-unary']),
      onlyConfigs: ['direct'],
      tools: ['autocannon'],
      durationSec: 1,
      runs: 1,
      warmupSec: 0,
      cpu: unpinned,
      projectDir,
      programs: sourcePrograms(projectDir),
      log: (line) => lines.push(line),
    });
    const [row] = result.scenarios[0]?.rows ?? [];
    expect(row).toMatchObject({ config: 'direct', status: 'ok', tool: 'grpc', errors: 0, non2xx: 0 });
    expect(row?.rps).toBeGreaterThan(0);
    expect(row?.p99Ms).toBeGreaterThan(0);
    expect(result.options.tools).toEqual(['grpc']);
    expect(lines.some((l) => l.includes('direct to backend grpc run 1/1'))).toBe(true);
  }, 30_000);
  it('terminates HTTPS in the gateway and passes TLS through by SNI (Node backend with its HTTPS listener)', async () => {
    const result = await runSuite({
      scenarios: findScenarios(['https-terminate', 'tls-passthrough']),
      onlyConfigs: ['direct', 'gateway'],
      tools: ['autocannon'],
      durationSec: 1,
      runs: 1,
      warmupSec: 0,
      cpu: unpinned,
      projectDir,
      programs: sourcePrograms(projectDir),
      forceNodeBackend: true,
      log: () => {},
    });
    for (const scenario of result.scenarios) {
      expect(scenario.rows.map((r) => [r.config, r.status, r.reason])).toEqual([
        ['direct', 'ok', undefined],
        ['gateway', 'ok', undefined],
      ]);
      for (const row of scenario.rows) {
        expect(row.rps).toBeGreaterThan(0);
        expect(row.errors).toBe(0);
        expect(row.non2xx).toBe(0);
      }
    }
  }, 90_000);
  it('traces through the gateway to the local OTLP sink, which receives every sampled span', async () => {
    const result = await runSuite({
      scenarios: findScenarios(['small']),
      onlyConfigs: ['gateway-traced'],
      tools: ['autocannon'],
      durationSec: 1,
      runs: 1,
      warmupSec: 0,
      cpu: unpinned,
      projectDir,
      programs: sourcePrograms(projectDir),
      forceNodeBackend: true,
      log: () => {},
    });
    const [scenario] = result.scenarios;
    expect(scenario?.rows.map((r) => [r.config, r.status, r.reason])).toEqual([
      ['gateway-traced', 'ok', undefined],
    ]);
    expect(scenario?.rows[0]?.rps).toBeGreaterThan(0);
    const report = scenario?.findings.find((f) => f.includes('the OTLP sink took'));
    const figures =
      /took ([\d,]+) spans .* counted ([\d,]+) exported, ([\d,]+) dropped.*, ([\d,]+) queued, ([\d.]+) sampled spans per request served \(([\d,]+) requests\)/.exec(
        report ?? '',
      );
    const [, took, exported, dropped, queued, perRequest, requests] = (figures ?? []).map((f) =>
      Number(f.replaceAll(',', '')),
    );
    expect(report).toMatch(/^clusterset-gateway, tracing on \(ratio 1\): /);
    expect(requests).toBeGreaterThan(0);
    // Every forwarded request made a server span and a client span; none lost without being counted.
    expect(perRequest).toBeCloseTo(2, 1);
    // What the gateway counted as exported is what the sink decoded (an export still in flight may lag).
    expect(took).toBeGreaterThan(0);
    expect(took).toBeLessThanOrEqual((exported ?? 0) + (queued ?? 0) + (dropped ?? 0));
    expect(took).toBeGreaterThanOrEqual(exported ?? 0);
  }, 60_000);
  it('makes a handshake per request, full and resumed, through the gateway (https-handshake)', async () => {
    const result = await runSuite({
      scenarios: findScenarios(['https-handshake']),
      onlyConfigs: ['gateway'],
      tools: ['autocannon'],
      durationSec: 1,
      runs: 1,
      warmupSec: 0,
      cpu: unpinned,
      projectDir,
      programs: sourcePrograms(projectDir),
      forceNodeBackend: true,
      log: () => {},
    });
    const rows = result.scenarios[0]?.rows ?? [];
    expect(rows.map((r) => [r.config, r.tool, r.status])).toEqual([
      ['gateway', 'tls-new', 'ok'],
      ['gateway', 'tls-resumed', 'ok'],
    ]);
    for (const row of rows) {
      expect(row.rps).toBeGreaterThan(0);
      expect(row.errors).toBe(0);
      // For tls-resumed, a handshake the gateway did not resume would count here.
      expect(row.non2xx).toBe(0);
    }
  }, 60_000);
});
