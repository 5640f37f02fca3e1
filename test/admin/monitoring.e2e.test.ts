import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type DemoProcess, startDemo, startProgram } from '../browser/demo-process.ts';
import { startKubeApiServer } from '../support/kube-api-server/index.ts';

/**
 * The dashboard and the alerts cannot rot silently: every clusterset_gateway_* name they use must be in the
 * /metrics of a running gateway (the demo under load, and one watching a Kubernetes API server), and every
 * label they select on must be a label of that metric.
 */
const MONITORING = resolve(import.meta.dirname, '../../deploy/monitoring');
/** Labels Prometheus adds when it scrapes (ServiceMonitor target labels), not the gateway. */
const TARGET_LABELS = new Set(['namespace', 'pod', 'job', 'instance', 'service', 'endpoint', 'container']);

interface Exposition {
  /** Metric family names from `# TYPE` lines, with their type. */
  readonly types: Map<string, string>;
  /** Label names seen on samples, by family name. */
  readonly labels: Map<string, Set<string>>;
}

function parseExposition(text: string, into: Exposition): void {
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      into.types.set(type[1]!, type[2]!);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}/.exec(line);
    if (!sample) continue;
    const family = familyOf(sample[1]!, into.types);
    const names = into.labels.get(family) ?? new Set<string>();
    for (const match of sample[2]!.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) names.add(match[1]!);
    into.labels.set(family, names);
  }
}

/** `x_bucket`, `x_sum`, `x_count` belong to histogram `x`. */
function familyOf(name: string, types: ReadonlyMap<string, string>): string {
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return base !== name && types.get(base) === 'histogram' ? base : name;
}

function dashboardQueries(): string[] {
  const dashboard = JSON.parse(readFileSync(join(MONITORING, 'grafana-dashboard.json'), 'utf8'));
  const panels = dashboard.panels.flatMap((p: { targets?: { expr: string }[] }) => p.targets ?? []);
  const variables = dashboard.templating.list.flatMap((v: { query?: { query?: string } }) =>
    typeof v.query === 'object' && v.query.query ? [v.query.query] : [],
  );
  return [...panels.map((t: { expr: string }) => t.expr), ...variables];
}

function ruleExpressions(): string[] {
  const rule = parse(readFileSync(join(MONITORING, 'prometheus-rules.yaml'), 'utf8'));
  return rule.spec.groups.flatMap((g: { rules: { expr: string }[] }) => g.rules.map((r) => r.expr));
}

/**
 * /metrics of the demo after traffic, then the near zone down: requests, attempts, health changes and failovers all
 * have samples (the active health checks see the stopped endpoints, passive ejections may not: the zone's traffic
 * leaves at its first refusals). Request
 * series have samples only once they have served: when another process on this busy machine took the free port
 * the demo's listener was given, the demo counted none of the requests, and it is started again.
 */
async function demoMetricsUnderTraffic(stops: (() => Promise<void>)[]): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const demo: DemoProcess = await startDemo();
    stops.push(() => demo.stop());
    for (let i = 0; i < 20; i++) await fetch(`${demo.webUrl}/`).then((r) => r.arrayBuffer());
    await demo.adminPost('/demo/stop?zone=us-east-1a');
    for (let i = 0; i < 20; i++) await fetch(`${demo.webUrl}/`).then((r) => r.arrayBuffer());
    // The zone's traffic moves on at its first refusals, before any ejection: the health changes come from the
    // active checks (two failed probes, a few seconds), so traffic goes on until they are counted.
    let text = '';
    for (let wait = 0; wait < 100; wait++) {
      text = await (await fetch(`${demo.adminUrl}/metrics`)).text();
      if (/^clusterset_gateway_endpoint_health_changes_total\{/m.test(text)) break;
      await fetch(`${demo.webUrl}/`).then((r) => r.arrayBuffer());
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (/^clusterset_gateway_requests_total\{/m.test(text)) return text;
    if (attempt === 3)
      throw new Error('the demo counted none of the requests sent to its listener, three times');
  }
}

describe('deploy/monitoring', () => {
  const exposition: Exposition = { types: new Map(), labels: new Map() };
  const stops: (() => Promise<void>)[] = [];
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csgw-monitoring-'));
    parseExposition(await demoMetricsUnderTraffic(stops), exposition);

    const api = await startKubeApiServer({ bookmarkIntervalMs: 200 });
    stops.push(() => api.stop());
    const kubeconfig = api.writeKubeconfig(join(dir, 'kubeconfig'));
    const kube = await startProgram(
      ['--kubernetes', '--kubeconfig', kubeconfig, '--address', '127.0.0.1', '--admin-address', '127.0.0.1'],
      {
        ...process.env,
        KUBERNETES_SERVICE_HOST: '',
        KUBECONFIG: '',
        POD_NAME: 'monitoring-test',
        POD_NAMESPACE: 'default',
      },
    );
    stops.push(() => kube.stop());
    parseExposition(await (await fetch(`${kube.adminUrl}/metrics`)).text(), exposition);
  }, 90_000);

  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('has a dashboard that is Grafana JSON and rules that are a PrometheusRule', () => {
    const dashboard = JSON.parse(readFileSync(join(MONITORING, 'grafana-dashboard.json'), 'utf8'));
    expect(dashboard.uid).toBe('clusterset-gateway');
    expect(dashboard.panels.length).toBeGreaterThan(10);
    const rule = parse(readFileSync(join(MONITORING, 'prometheus-rules.yaml'), 'utf8'));
    expect([rule.apiVersion, rule.kind]).toEqual(['monitoring.coreos.com/v1', 'PrometheusRule']);
    const alerts = rule.spec.groups.flatMap((g: { rules: { alert: string }[] }) =>
      g.rules.map((r) => r.alert),
    );
    expect(alerts).toEqual([
      'ClustersetGatewayNoHealthyLocalEndpoint',
      'ClustersetGatewayTrafficSpillingFromNearestTier',
      'ClustersetGatewayHighErrorRatio',
      'ClustersetGatewayConfigTranslationFailing',
      'ClustersetGatewayConfigWatchSilent',
      'ClustersetGatewayListenerUnbound',
    ]);
    const monitor = parse(readFileSync(join(MONITORING, 'servicemonitor.yaml'), 'utf8'));
    expect([monitor.kind, monitor.spec.endpoints[0].port, monitor.spec.endpoints[0].path]).toEqual([
      'ServiceMonitor',
      'metrics',
      '/metrics',
    ]);
  });

  it('uses only metric names the gateway exports', () => {
    const queries = [...dashboardQueries(), ...ruleExpressions()];
    const used = new Set(
      queries.flatMap((q) => [...q.matchAll(/clusterset_gateway_[a-z0-9_]+/g)].map((m) => m[0])),
    );
    expect(used.size).toBeGreaterThan(10);
    const missing = [...used].filter((name) => !exposition.types.has(familyOf(name, exposition.types)));
    expect(missing).toEqual([]);
  });

  it('selects and groups only on labels those metrics carry', () => {
    const problems: string[] = [];
    let checked = 0;
    let grouped = 0;
    for (const query of [...dashboardQueries(), ...ruleExpressions()]) {
      for (const m of query.matchAll(/(clusterset_gateway_[a-z0-9_]+)\{([^}]*)\}/g)) {
        const family = familyOf(m[1]!, exposition.types);
        const known = exposition.labels.get(family);
        if (!known) continue;
        checked++;
        for (const label of m[2]!.matchAll(/([a-z_]+)\s*(=~|!=|!~|=)/g)) {
          if (!TARGET_LABELS.has(label[1]!) && !known.has(label[1]!)) problems.push(`${m[1]}: ${label[1]}`);
        }
      }
    }
    // Labels a `by (...)` groups on must exist on some metric of the expression.
    for (const query of [...dashboardQueries(), ...ruleExpressions()]) {
      const families = [...query.matchAll(/clusterset_gateway_[a-z0-9_]+/g)].map((m) =>
        familyOf(m[0], exposition.types),
      );
      // Metrics without samples here (no config warning in the demo) show no labels: nothing to compare.
      if (!families.every((f) => exposition.labels.has(f))) continue;
      grouped++;
      const all = new Set(families.flatMap((f) => [...(exposition.labels.get(f) ?? [])]));
      for (const by of query.matchAll(/(?:by|on) \(([^)]*)\)/g)) {
        for (const label of by[1]!
          .split(',')
          .map((l) => l.trim())
          .filter(Boolean)) {
          if (label !== 'le' && !TARGET_LABELS.has(label) && !all.has(label))
            problems.push(`${query}: by ${label}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(15);
    expect(grouped).toBeGreaterThan(15);
    for (const family of [
      'clusterset_gateway_requests_total',
      'clusterset_gateway_upstream_requests_total',
      'clusterset_gateway_upstream_tier_share_ratio',
      'clusterset_gateway_upstream_healthy_endpoints',
      'clusterset_gateway_endpoint_health_changes_total',
      'clusterset_gateway_locality_info',
      'clusterset_gateway_watch_events_total',
    ])
      expect(exposition.labels.has(family), family).toBe(true);
  });
});
