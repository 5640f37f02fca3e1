import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { asPermissions, scanApiUse } from './api-usage.ts';
import { buildKustomization } from './kustomize.ts';
import { DEPLOY_DIR, REPO_ROOT } from './manifests.ts';
import { allows, grantsFor, type Permission } from './rbac.ts';

const NAMESPACE = 'clusterset-gateway-system';
const SERVICE_ACCOUNT = 'clusterset-gateway';

const WATCHED: readonly (readonly [group: string, resources: readonly string[]])[] = [
  [
    'gateway.networking.k8s.io',
    [
      'gatewayclasses',
      'gateways',
      'httproutes',
      'grpcroutes',
      'listenersets',
      'referencegrants',
      'tlsroutes',
      'tcproutes',
      'udproutes',
      'backendtlspolicies',
    ],
  ],
  ['', ['services', 'namespaces', 'secrets', 'configmaps']],
  ['discovery.k8s.io', ['endpointslices']],
  ['multicluster.x-k8s.io', ['serviceimports', 'clusterprofiles']],
  ['about.k8s.io', ['clusterproperties']],
  ['policy.clusterset-gateway.io', ['clusterselectionpolicies']],
  ['gateway.networking.x-k8s.io', ['xbackendtrafficpolicies']],
];
const STATUS: readonly string[] = [
  'gatewayclasses/status',
  'gateways/status',
  'httproutes/status',
  'grpcroutes/status',
  'listenersets/status',
  'tlsroutes/status',
  'tcproutes/status',
  'udproutes/status',
  'backendtlspolicies/status',
];

/** What issue 4 says the controller does, cluster-wide: informers (list+watch), status writes, events. */
const CLUSTER_NEEDS: readonly Permission[] = [
  ...WATCHED.flatMap(([group, resources]) =>
    resources.flatMap((resource) => ['list', 'watch'].map((verb) => ({ group, resource, verb }))),
  ),
  ...STATUS.flatMap((resource) =>
    ['update', 'patch'].map((verb) => ({ group: 'gateway.networking.k8s.io', resource, verb })),
  ),
  ...['update', 'patch'].map((verb) => ({
    group: 'policy.clusterset-gateway.io',
    resource: 'clusterselectionpolicies/status',
    verb,
  })),
  ...['update', 'patch'].map((verb) => ({
    group: 'gateway.networking.x-k8s.io',
    resource: 'xbackendtrafficpolicies/status',
    verb,
  })),
  ...['', 'events.k8s.io'].flatMap((group) =>
    ['create', 'patch'].map((verb) => ({ group, resource: 'events', verb })),
  ),
];
/** Leader election (coordination.k8s.io/v1 Lease) in the controller's own namespace. */
const NAMESPACE_NEEDS: readonly Permission[] = ['get', 'create', 'update'].map((verb) => ({
  group: 'coordination.k8s.io',
  resource: 'leases',
  verb,
}));
/** Least privilege: the needs plus `get` of what is watched, and nothing else. */
const CLUSTER_ALLOWED: readonly Permission[] = [
  ...CLUSTER_NEEDS,
  ...WATCHED.flatMap(([group, resources]) => resources.map((resource) => ({ group, resource, verb: 'get' }))),
];

const show = (p: Permission): string => `${p.verb} ${p.group || 'core'}/${p.resource}`;

describe.each(['', 'daemonset'])('RBAC of deploy/%s', (variant) => {
  const objects = buildKustomization(join(DEPLOY_DIR, variant));
  const grants = grantsFor(objects, NAMESPACE, SERVICE_ACCOUNT);
  const inNamespace = grants.namespaced.get(NAMESPACE) ?? [];

  it.each(CLUSTER_NEEDS.map((p) => [show(p), p] as const))('grants %s cluster-wide', (_name, p) => {
    expect(allows(grants.cluster, p)).toBe(true);
  });

  it.each(NAMESPACE_NEEDS.map((p) => [show(p), p] as const))(`grants %s in ${NAMESPACE}`, (_name, p) => {
    expect(allows(inNamespace, p)).toBe(true);
  });

  it('grants nothing more cluster-wide: no wildcards, no spec writes, no other resources', () => {
    const extra = grants.cluster.filter(
      (g) =>
        !CLUSTER_ALLOWED.some((a) => a.group === g.group && a.resource === g.resource && a.verb === g.verb),
    );
    expect(extra.map(show)).toEqual([]);
  });

  it('grants nothing more in its namespace than the Lease verbs, and nothing in any other namespace', () => {
    const extra = inNamespace.filter(
      (g) =>
        !NAMESPACE_NEEDS.some((a) => a.group === g.group && a.resource === g.resource && a.verb === g.verb),
    );
    expect(extra.map(show)).toEqual([]);
    expect([...grants.namespaced.keys()]).toEqual([NAMESPACE]);
  });
});

describe('the API-call scanner', () => {
  it('reads informer paths, status paths and typed client methods', () => {
    const source = `
      makeInformer(kc, '/apis/gateway.networking.k8s.io/v1/httproutes', list);
      makeInformer(kc, \`/apis/multicluster.x-k8s.io/\${version}/serviceimports\`, list);
      await request(\`/apis/gateway.networking.k8s.io/v1/namespaces/\${ns}/gateways/\${name}/status\`);
      await request('/api/v1/namespaces/default');
      await coordination.replaceNamespacedLease({ name, namespace, body });
      await core.createNamespacedEvent({ namespace, body });
      await core.listNode();
    `;
    const { uses, unknown } = scanApiUse(source, 'fixture.ts');
    expect(uses.map((u) => `${u.verbs.join('|')} ${u.group || 'core'}/${u.resource}`)).toEqual([
      'list gateway.networking.k8s.io/httproutes',
      'watch gateway.networking.k8s.io/httproutes',
      'list multicluster.x-k8s.io/serviceimports',
      'watch multicluster.x-k8s.io/serviceimports',
      'update|patch gateway.networking.k8s.io/gateways/status',
      'get core/namespaces',
      'update coordination.k8s.io/leases',
      'create core/events',
    ]);
    expect(unknown).toEqual(['fixture.ts: .listNode(']);
  });
});

/** Source files that talk to the API server: the kube source, status writer, leader election, and any client. */
function apiClientFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) {
        const rel = relative(REPO_ROOT, path);
        const inApiFolder = /^src\/(sources\/kube|status|leader)\//.test(rel);
        // The simulated API server answers calls; it makes none.
        const isServer = rel.startsWith('src/demo/kube-sim/');
        if (!isServer && (inApiFolder || readFileSync(path, 'utf8').includes('@kubernetes/client-node')))
          out.push(path);
      }
    }
  };
  walk(join(REPO_ROOT, 'src'));
  return out;
}

describe('RBAC covers every API call found in src/', () => {
  const grants = grantsFor(buildKustomization(DEPLOY_DIR), NAMESPACE, SERVICE_ACCOUNT);
  const granted = [...grants.cluster, ...(grants.namespaced.get(NAMESPACE) ?? [])];
  const files = apiClientFiles();

  it('knows every typed client method the code calls', () => {
    const unknown = files.flatMap((f) => scanApiUse(readFileSync(f, 'utf8'), relative(REPO_ROOT, f)).unknown);
    expect(unknown).toEqual([]);
  });

  it('grants each call the code makes', () => {
    const missing = files
      .flatMap((f) => scanApiUse(readFileSync(f, 'utf8'), relative(REPO_ROOT, f)).uses)
      .filter((use) => !asPermissions(use).some((p) => allows(granted, p)))
      .map((use) => `${use.verbs.join('|')} ${use.group || 'core'}/${use.resource} (${use.evidence})`);
    expect(missing).toEqual([]);
  });
});
