import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCli } from '../../src/cli/args.ts';
import { DEFAULT_CONTROLLER_NAME } from '../../src/gateway/options.ts';
import { type BuiltObject, buildKustomization } from './kustomize.ts';
import { at, DEPLOY_DIR, isObject, type Json, type JsonObject, list, str } from './manifests.ts';

const base = buildKustomization(DEPLOY_DIR);
const withDaemonSet = buildKustomization(join(DEPLOY_DIR, 'daemonset'));

function one(objects: readonly BuiltObject[], kind: string, name: string): JsonObject {
  const found = objects.filter((o) => o.object['kind'] === kind && at(o.object, 'metadata', 'name') === name);
  expect(found, `${kind} ${name}`).toHaveLength(1);
  return found[0]!.object;
}

function container(workload: JsonObject): JsonObject {
  const containers = list(at(workload, 'spec', 'template', 'spec', 'containers'));
  expect(containers).toHaveLength(1);
  return containers[0] as JsonObject;
}

function containerPort(c: JsonObject, name: string): number | undefined {
  const port = list(c['ports']).find((p) => at(p, 'name') === name);
  const value = at(port, 'containerPort');
  return typeof value === 'number' ? value : undefined;
}

/** The container's args as the kubelet passes them: `$(VAR)` expanded from `env`. */
function expandedArgs(c: JsonObject, env: Record<string, string>): string[] {
  return list(c['args']).map((a) =>
    String(a).replace(/\$\(([A-Z_][A-Z0-9_]*)\)/g, (_m, v: string) => env[v] ?? ''),
  );
}

function fieldRefs(c: JsonObject): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of list(c['env'])) {
    const path = str(at(e, 'valueFrom', 'fieldRef', 'fieldPath'));
    if (path !== undefined) out.set(String(at(e, 'name')), path);
  }
  return out;
}

/** What the downward API gives the process on a node in zone-a, region-1 (Kubernetes 1.35+, KEP-4742). */
const POD_ENV: Record<string, string> = {
  NODE_NAME: 'node-1',
  CLUSTERSET_GATEWAY_ZONE: 'zone-a',
  CLUSTERSET_GATEWAY_REGION: 'region-1',
  POD_NAME: 'clusterset-gateway-abc',
  POD_NAMESPACE: 'clusterset-gateway-system',
};

const workloads: readonly (readonly [string, JsonObject])[] = [
  ['Deployment clusterset-gateway', one(base, 'Deployment', 'clusterset-gateway')],
  ['DaemonSet clusterset-gateway-node', one(withDaemonSet, 'DaemonSet', 'clusterset-gateway-node')],
];

describe.each(workloads)('%s', (_name, workload) => {
  const c = container(workload);
  const podSpec = at(workload, 'spec', 'template', 'spec');

  it('runs the gateway with the Kubernetes source, and the CLI accepts every flag', () => {
    const args = expandedArgs(c, POD_ENV);
    expect(args).toContain('--kubernetes');
    const options = parseCli(args, POD_ENV);
    expect(options.source.kind).toBe('kubernetes');
    // Listeners and metrics bind every interface inside the pod, or probes and Services could not reach them;
    // the admin server (/config_dump) stays on the pod's loopback.
    expect(options.address).toBe('0.0.0.0');
    expect(options.metrics?.address).toBe('0.0.0.0');
    expect(options.adminAddress).toBe('127.0.0.1');
  });

  it('serves metrics, the east-west listener and the listeners on the ports it declares', () => {
    const options = parseCli(expandedArgs(c, POD_ENV), POD_ENV);
    expect(options.metrics?.port).toBe(containerPort(c, 'metrics'));
    expect(containerPort(c, 'admin')).toBeUndefined();
    expect(options.eastWestPort).toBe(containerPort(c, 'east-west'));
    const http = containerPort(c, 'http');
    if (http !== undefined) {
      expect(80 + options.listenerPortOffset).toBe(http);
      expect(443 + options.listenerPortOffset).toBe(containerPort(c, 'https'));
    }
    for (const p of list(c['ports'])) {
      // No privileged port, so no NET_BIND_SERVICE.
      expect(Number(at(p, 'containerPort'))).toBeGreaterThanOrEqual(1024);
    }
  });

  it('knows its node, zone and region from the downward API', () => {
    const refs = fieldRefs(c);
    expect(refs.get('NODE_NAME')).toBe('spec.nodeName');
    expect(refs.get('CLUSTERSET_GATEWAY_ZONE')).toBe("metadata.labels['topology.kubernetes.io/zone']");
    expect(refs.get('CLUSTERSET_GATEWAY_REGION')).toBe("metadata.labels['topology.kubernetes.io/region']");
    expect(refs.get('POD_NAME')).toBe('metadata.name');
    expect(refs.get('POD_NAMESPACE')).toBe('metadata.namespace');
    const identity = parseCli(expandedArgs(c, POD_ENV), POD_ENV).identity;
    expect(identity).toMatchObject({ node: 'node-1', zone: 'zone-a', region: 'region-1' });
  });

  it('probes /healthz (liveness) and /readyz (readiness) on the metrics port', () => {
    expect(at(c, 'livenessProbe', 'httpGet', 'path')).toBe('/healthz');
    expect(at(c, 'readinessProbe', 'httpGet', 'path')).toBe('/readyz');
    for (const probe of ['livenessProbe', 'readinessProbe']) {
      const port = at(c, probe, 'httpGet', 'port');
      expect(
        port === 'metrics' || port === containerPort(c, 'metrics'),
        `${probe} port ${String(port)}`,
      ).toBe(true);
    }
  });

  it('runs as non-root, read-only, without privilege escalation or capabilities', () => {
    expect(at(podSpec, 'securityContext', 'runAsNonRoot')).toBe(true);
    expect(at(podSpec, 'securityContext', 'runAsUser')).not.toBe(0);
    expect(at(podSpec, 'securityContext', 'seccompProfile', 'type')).toBe('RuntimeDefault');
    expect(at(podSpec, 'hostNetwork') ?? false).toBe(false);
    expect(at(c, 'securityContext', 'runAsNonRoot')).toBe(true);
    expect(at(c, 'securityContext', 'readOnlyRootFilesystem')).toBe(true);
    expect(at(c, 'securityContext', 'allowPrivilegeEscalation')).toBe(false);
    expect(at(c, 'securityContext', 'capabilities', 'drop')).toEqual(['ALL']);
    expect(at(c, 'securityContext', 'capabilities', 'add')).toBeUndefined();
    expect(at(c, 'securityContext', 'privileged') ?? false).toBe(false);
  });

  it('requests CPU and memory and caps memory', () => {
    expect(at(c, 'resources', 'requests', 'cpu')).toBeDefined();
    expect(at(c, 'resources', 'requests', 'memory')).toBeDefined();
    expect(at(c, 'resources', 'limits', 'memory')).toBeDefined();
  });

  it('runs as the ServiceAccount the RBAC binds', () => {
    expect(at(podSpec, 'serviceAccountName')).toBe('clusterset-gateway');
    const all = [...base, ...withDaemonSet].map((o) => o.object);
    const sa = all.find(
      (o) => o['kind'] === 'ServiceAccount' && at(o, 'metadata', 'name') === 'clusterset-gateway',
    );
    expect(at(sa, 'metadata', 'namespace')).toBe(at(workload, 'metadata', 'namespace'));
  });

  it('selects its own pods', () => {
    const selector = at(workload, 'spec', 'selector', 'matchLabels');
    const labels = at(workload, 'spec', 'template', 'metadata', 'labels');
    expect(isObject(selector) && isObject(labels)).toBe(true);
    expect(labels).toMatchObject(selector as object);
  });
});

describe('Deployment', () => {
  const deployment = one(base, 'Deployment', 'clusterset-gateway');

  it('runs 2 replicas spread over zones and nodes', () => {
    expect(at(deployment, 'spec', 'replicas')).toBe(2);
    const keys = list(at(deployment, 'spec', 'template', 'spec', 'topologySpreadConstraints')).map((t) =>
      at(t, 'topologyKey'),
    );
    expect(keys).toEqual(expect.arrayContaining(['topology.kubernetes.io/zone', 'kubernetes.io/hostname']));
  });
});

/** Pods a Service selects, among the workloads of a build. */
function selectedWorkloads(objects: readonly BuiltObject[], service: JsonObject): JsonObject[] {
  const selector = at(service, 'spec', 'selector');
  expect(isObject(selector)).toBe(true);
  return objects
    .map((o) => o.object)
    .filter((o) => o['kind'] === 'Deployment' || o['kind'] === 'DaemonSet')
    .filter((o) => {
      const labels = at(o, 'spec', 'template', 'metadata', 'labels');
      return isObject(labels) && Object.entries(selector as JsonObject).every(([k, v]) => labels[k] === v);
    });
}

function targetsResolve(objects: readonly BuiltObject[], service: JsonObject): void {
  const pods = selectedWorkloads(objects, service);
  expect(pods.length, `${String(at(service, 'metadata', 'name'))} selects no workload`).toBeGreaterThan(0);
  for (const p of list(at(service, 'spec', 'ports'))) {
    const target: Json | undefined = at(p, 'targetPort');
    for (const w of pods) {
      const c = container(w);
      const ok =
        typeof target === 'string'
          ? containerPort(c, target) !== undefined
          : list(c['ports']).some((cp) => at(cp, 'containerPort') === target);
      expect(
        ok,
        `${String(at(service, 'metadata', 'name'))} port ${String(at(p, 'port'))} -> ${String(target)}`,
      ).toBe(true);
    }
  }
}

describe('Services', () => {
  it('a LoadBalancer maps 80 and 443 to the offset listener ports of the Deployment', () => {
    const lb = one(base, 'Service', 'clusterset-gateway');
    expect(at(lb, 'spec', 'type')).toBe('LoadBalancer');
    expect(list(at(lb, 'spec', 'ports')).map((p) => at(p, 'port'))).toEqual([80, 443]);
    expect(selectedWorkloads(base, lb).map((w) => w['kind'])).toEqual(['Deployment']);
    targetsResolve(base, lb);
  });

  it('the metrics Service exposes only the metrics port; no Service reaches the admin server', () => {
    const metrics = one(base, 'Service', 'clusterset-gateway-metrics');
    expect(at(metrics, 'spec', 'type')).toBe('ClusterIP');
    expect(list(at(metrics, 'spec', 'ports')).map((p) => at(p, 'targetPort'))).toEqual(['metrics']);
    targetsResolve(base, metrics);
    for (const { object } of base.filter((o) => o.object['kind'] === 'Service')) {
      for (const p of list(at(object, 'spec', 'ports'))) expect(at(p, 'port')).not.toBe(9901);
    }
  });

  it('drains on shutdown within the grace period: preStop sleep + --drain-timeout-ms < terminationGracePeriodSeconds', () => {
    const deployment = one(base, 'Deployment', 'clusterset-gateway');
    const c = container(deployment);
    const drainMs = parseCli(expandedArgs(c, POD_ENV), POD_ENV).limits.drainTimeoutMs;
    expect(drainMs).toBeGreaterThanOrEqual(15_000);
    const preStop = Number(at(c, 'lifecycle', 'preStop', 'sleep', 'seconds') ?? 0);
    const grace = Number(at(deployment, 'spec', 'template', 'spec', 'terminationGracePeriodSeconds'));
    expect(preStop * 1000 + drainMs).toBeLessThan(grace * 1000);
  });

  it('the east-west Service reaches the Deployment on port 80', () => {
    const ew = one(base, 'Service', 'clusterset-gateway-east-west');
    expect(list(at(ew, 'spec', 'ports')).map((p) => at(p, 'port'))).toContain(80);
    expect(selectedWorkloads(base, ew).map((w) => w['kind'])).toEqual(['Deployment']);
    targetsResolve(base, ew);
  });

  it('in the DaemonSet variant, the east-west Service stays on the caller’s node', () => {
    const ew = one(withDaemonSet, 'Service', 'clusterset-gateway-east-west');
    expect(at(ew, 'spec', 'internalTrafficPolicy')).toBe('Local');
    expect(selectedWorkloads(withDaemonSet, ew).map((w) => w['kind'])).toEqual(['DaemonSet']);
    targetsResolve(withDaemonSet, ew);
    // North-south stays on the Deployment.
    const lb = one(withDaemonSet, 'Service', 'clusterset-gateway');
    expect(selectedWorkloads(withDaemonSet, lb).map((w) => w['kind'])).toEqual(['Deployment']);
  });
});

describe('GatewayClass', () => {
  it('names the controller the gateway owns by default', () => {
    const gc = one(base, 'GatewayClass', 'clusterset-gateway');
    expect(at(gc, 'spec', 'controllerName')).toBe(DEFAULT_CONTROLLER_NAME);
  });
});

describe('deploy/README.md', () => {
  it('lists the flags the Deployment really passes', () => {
    const readme = readFileSync(join(DEPLOY_DIR, 'README.md'), 'utf8');
    const args = list(container(one(base, 'Deployment', 'clusterset-gateway'))['args']).join(' ');
    expect(readme).toContain(`\`${args}\``);
  });
});
