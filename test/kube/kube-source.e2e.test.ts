import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveServiceImportBackend } from '../../src/mcs/backends.ts';
import type { Snapshot } from '../../src/snapshot/snapshot.ts';
import { createKubeSource, type KubeSource } from '../../src/sources/kube/index.ts';
import type { KubeApiServer } from '../support/kube-api-server/index.ts';
import {
  captureLogs,
  eventually,
  gateway,
  gatewayClass,
  httpRoute,
  kubeConfigFor,
  SnapshotRecorder,
  service,
  withServer,
} from './helpers.ts';

let server: KubeApiServer | undefined;
let source: KubeSource | undefined;

afterEach(async () => {
  await source?.stop();
  await server?.stop();
  source = undefined;
  server = undefined;
});

function startSource(srv: KubeApiServer, extra: Partial<Parameters<typeof createKubeSource>[0]> = {}) {
  const logs = captureLogs();
  const registry = new Registry();
  const recorder = new SnapshotRecorder();
  source = createKubeSource({
    kubeConfig: kubeConfigFor(srv),
    logger: logs.logger,
    debounceMs: 20,
    maxDebounceMs: 200,
    backoffInitialMs: 20,
    backoffMaxMs: 200,
    discoveryIntervalMs: 100,
    registry,
    ...extra,
  });
  void source.start(recorder.onSnapshot);
  return { source, recorder, logs, registry };
}

async function counter(registry: Registry, kind: string, type: string): Promise<number> {
  const metric = await registry.getSingleMetric('clusterset_gateway_watch_events_total')?.get();
  return metric?.values.find((v) => v.labels.kind === kind && v.labels.type === type)?.value ?? 0;
}

describe('Kubernetes source against the API test server', () => {
  it('emits one complete snapshot after the initial list of every kind, then reports ready', async () => {
    server = await withServer();
    server.create(gatewayClass());
    server.create(gateway());
    server.create(httpRoute('web'));
    server.create(service('web'));
    server.create({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web-abc', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.1.0.5'], conditions: { ready: true }, zone: 'zone-a' }],
      ports: [{ name: 'http', port: 8080 }],
    });
    server.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'cert', namespace: 'default' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': 'Y2VydA==', 'tls.key': 'a2V5' },
    });
    server.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'password', namespace: 'default' },
      stringData: { password: 'hunter2' },
    });
    server.create({
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceImport',
      metadata: { name: 'web', namespace: 'default' },
      spec: { type: 'ClusterSetIP', ports: [{ port: 8080, protocol: 'TCP' }] },
    });
    server.create({
      apiVersion: 'about.k8s.io/v1alpha1',
      kind: 'ClusterProperty',
      metadata: { name: 'cluster.clusterset.k8s.io' },
      spec: { value: 'east' },
    });

    const { source: src, recorder } = startSource(server);
    expect(src.ready).toBe(false);
    const snapshot = await recorder.waitFor(() => true, 'initial snapshot');
    expect(recorder.snapshots).toHaveLength(1);
    expect(src.ready).toBe(true);
    expect(src.problems).toEqual([]);
    expect(snapshot.gatewayClasses.map((g) => g.metadata.name)).toEqual(['clusterset']);
    expect(snapshot.get('Gateway', 'default', 'gw')?.spec?.listeners?.[0]?.port).toBe(80);
    expect(snapshot.get('HTTPRoute', 'default', 'web')?.spec?.parentRefs?.[0]?.name).toBe('gw');
    expect(snapshot.get('Service', 'default', 'web')?.apiVersion).toBe('v1');
    expect(snapshot.slicesForService('default', 'web')[0]?.endpoints?.[0]?.addresses).toEqual(['10.1.0.5']);
    // No listener names `cert`: it is kept without its data, as Secrets that cannot be certificates are.
    expect(snapshot.get('Secret', 'default', 'cert')?.type).toBe('kubernetes.io/tls');
    expect(snapshot.get('Secret', 'default', 'cert')?.data).toBeUndefined();
    expect(snapshot.get('Secret', 'default', 'password')?.data).toBeUndefined();
    expect(snapshot.get('ServiceImport', 'default', 'web')?.apiVersion).toBe('multicluster.x-k8s.io/v1beta1');
    expect(snapshot.get('ClusterProperty', undefined, 'cluster.clusterset.k8s.io')?.spec?.value).toBe('east');
    expect(snapshot.namespaces.map((n) => n.metadata.name)).toEqual(['default', 'kube-system']);
    // Status written by controllers does not reach translation.
    expect(snapshot.get('Gateway', 'default', 'gw')).not.toHaveProperty('status');
    expect(src.servedServiceImportKinds).toEqual([{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport' }]);
  });

  it('keeps certificate data only for Secrets a listener names, fetching it when one starts to', async () => {
    server = await withServer();
    const tlsSecret = (name: string, crt: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: 'default' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': Buffer.from(crt).toString('base64'), 'tls.key': 'a2V5' },
    });
    server.create(gatewayClass());
    server.create(gateway());
    // Many certificates nobody names (a cert-manager namespace, other controllers'): none keeps its data.
    const padding = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 200; i++) server.create(tlsSecret(`other-${i}`, padding));
    server.create(tlsSecret('site', 'site-cert'));
    const { recorder } = startSource(server);
    const first = await recorder.waitFor(() => true, 'initial snapshot');
    const kept = [...first.byKey('Secret').values()].filter(
      (s) => (s as { data?: unknown }).data !== undefined,
    );
    expect(kept).toEqual([]);
    expect(first.byKey('Secret').size).toBe(201);

    // A listener names `site` (the Secret itself does not change): its data is fetched before the snapshot.
    server.patch('gateways', 'default', 'gw', {
      spec: {
        listeners: [
          { name: 'http', port: 80, protocol: 'HTTP' },
          { name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'site' }] } },
        ],
      },
    });
    const named = await recorder.waitFor(
      (s) => s.get('Gateway', 'default', 'gw')?.spec?.listeners?.length === 2,
      'gateway with the HTTPS listener',
    );
    expect(
      Buffer.from(String(named.get('Secret', 'default', 'site')?.data?.['tls.crt']), 'base64').toString(),
    ).toBe('site-cert');
    expect(named.get('Secret', 'default', 'other-0')?.data).toBeUndefined();

    // Rotated while named: the watch brings the new data.
    server.patch('secrets', 'default', 'site', {
      data: { 'tls.crt': Buffer.from('rotated').toString('base64') },
    });
    await recorder.waitFor(
      (s) =>
        s.get('Secret', 'default', 'site')?.data?.['tls.crt'] === Buffer.from('rotated').toString('base64'),
      'rotated certificate',
    );

    // No longer named: the data goes again.
    server.patch('gateways', 'default', 'gw', {
      spec: { listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
    });
    await recorder.waitFor(
      (s) =>
        s.get('Gateway', 'default', 'gw')?.spec?.listeners?.length === 1 &&
        s.get('Secret', 'default', 'site')?.data === undefined,
      'certificate data dropped',
    );
  });

  it('follows creates, updates and deletes', async () => {
    server = await withServer();
    const { recorder } = startSource(server);
    await recorder.waitFor(() => true, 'initial snapshot');
    server.create(httpRoute('a'));
    await recorder.waitFor((s) => s.get('HTTPRoute', 'default', 'a') !== undefined, 'route a created');
    server.patch('httproutes', 'default', 'a', { spec: { hostnames: ['a.example.com'] } });
    const updated = await recorder.waitFor(
      (s) => s.get('HTTPRoute', 'default', 'a')?.spec?.hostnames?.[0] === 'a.example.com',
      'route a updated',
    );
    expect(updated.get('HTTPRoute', 'default', 'a')?.metadata.generation).toBe(2);
    server.delete('httproutes', 'default', 'a');
    await recorder.waitFor((s) => s.get('HTTPRoute', 'default', 'a') === undefined, 'route a deleted');
  });

  it('reads a ServiceImport status.endpointSliceObjects its MCS implementation writes through the status subresource', async () => {
    server = await withServer();
    server.create({
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceImport',
      metadata: { name: 'cart', namespace: 'default' },
      spec: {
        type: 'ClusterSetIP',
        ips: ['242.0.0.7'],
        ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
      },
    });
    const { recorder } = startSource(server);
    const before = await recorder.waitFor(
      (s) => s.get('ServiceImport', 'default', 'cart') !== undefined,
      'import',
    );
    expect(before.get('ServiceImport', 'default', 'cart')?.status).toBeUndefined();
    server.patch(
      'serviceimports',
      'default',
      'cart',
      { status: { endpointSliceObjects: 'Absent' } },
      'status',
    );
    const after = await recorder.waitFor(
      (s) => s.get('ServiceImport', 'default', 'cart')?.status?.endpointSliceObjects === 'Absent',
      'status Absent',
    );
    const resolved = resolveServiceImportBackend(after, 'default', 'cart', 80, { cluster: 'east' });
    expect(resolved.ok && resolved.backend.tiers.flat().map((e) => `${e.cluster} ${e.key}`)).toEqual([
      'east 242.0.0.7:80',
    ]);
  });

  it('hands EndpointSlice-only changes over as a delta of the last snapshot, quickly; any other change in full', async () => {
    server = await withServer();
    server.create(gatewayClass());
    server.create(service('web'));
    const slice = (name: string, address: string) => ({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
      ports: [{ name: 'http', port: 8080 }],
    });
    server.create(slice('web-a', '10.1.0.5'));
    // A long quiet time for other changes: a slice change that waited for it would take over 2 s.
    const { recorder } = startSource(server, { debounceMs: 2000, maxDebounceMs: 4000 });
    const first = await recorder.waitFor(() => true, 'initial snapshot');
    const addresses = (s: Snapshot) =>
      s
        .slicesForService('default', 'web')
        .flatMap((sl) => sl.endpoints?.flatMap((e) => e.addresses) ?? [])
        .sort();

    server.create(slice('web-b', '10.1.0.6'));
    const second = await recorder.waitFor(
      (s) => addresses(s).length === 2,
      'the new slice, before the usual quiet time',
      1500,
    );
    expect(addresses(second)).toEqual(['10.1.0.5', '10.1.0.6']);
    expect(second.sliceDelta?.base).toBe(first);
    expect(second.sliceDelta?.slices.map((c) => [c.before?.metadata.name, c.after?.metadata.name])).toEqual([
      [undefined, 'web-b'],
    ]);
    // Every other object is the same object.
    expect(second.get('Service', 'default', 'web')).toBe(first.get('Service', 'default', 'web'));

    server.delete('endpointslices', 'default', 'web-a');
    const third = await recorder.waitFor((s) => addresses(s).length === 1, 'the slice removed', 1500);
    expect(third.sliceDelta?.base).toBe(second);
    expect(addresses(third)).toEqual(['10.1.0.6']);

    // A Service change (and a slice change with it) is a full snapshot, after the usual quiet time.
    server.create(service('api'));
    server.create(slice('web-c', '10.1.0.7'));
    const fourth = await recorder.waitFor((s) => addresses(s).length === 2, 'the full snapshot', 5000);
    expect(fourth.sliceDelta).toBeUndefined();
    expect(fourth.get('Service', 'default', 'api')).toBeDefined();
    expect(recorder.snapshots).toHaveLength(4);
  });

  it('does not rebuild for changes translation cannot see (our own status writes)', async () => {
    server = await withServer();
    server.create(gateway());
    const { recorder } = startSource(server);
    await recorder.waitFor(() => true, 'initial snapshot');
    server.patch(
      'gateways',
      'default',
      'gw',
      {
        status: {
          conditions: [
            {
              type: 'Accepted',
              status: 'True',
              reason: 'Accepted',
              message: '',
              lastTransitionTime: '2024-01-01T00:00:00Z',
            },
          ],
        },
      },
      'status',
    );
    server.create(service('marker'));
    await recorder.waitFor((s) => s.get('Service', 'default', 'marker') !== undefined, 'marker service');
    expect(recorder.snapshots).toHaveLength(2);
  });

  it('recovers when every watch connection is cut', async () => {
    server = await withServer();
    const { recorder } = startSource(server);
    await recorder.waitFor(() => true, 'initial snapshot');
    // 19 watched kinds: the 14 of before plus GRPCRoute, ListenerSet, ClusterSelectionPolicy, TCPRoute and UDPRoute.
    await eventually(() => server?.watchCount === 19, 'all watches open');
    expect(server.dropWatches()).toBe(19);
    server.create(service('after-drop'));
    await recorder.waitFor(
      (s) => s.get('Service', 'default', 'after-drop') !== undefined,
      'service after drop',
    );
  });

  it('relists after 410 Gone and sees the changes made while it was away, deletions included', async () => {
    server = await withServer();
    server.create(service('old'));
    server.create(service('kept'));
    const { recorder, registry } = startSource(server);
    await recorder.waitFor((s) => s.get('Service', 'default', 'old') !== undefined, 'initial snapshot');
    await server.stop();
    server.delete('services', 'default', 'old');
    server.create(service('new'));
    server.patch('services', 'default', 'kept', { metadata: { labels: { changed: 'yes' } } });
    server.expireHistory();
    await server.start();
    const after = await recorder.waitFor(
      (s) => s.get('Service', 'default', 'new') !== undefined,
      'relisted snapshot',
    );
    expect(after.get('Service', 'default', 'old')).toBeUndefined();
    expect(after.get('Service', 'default', 'kept')?.metadata.labels).toEqual({ changed: 'yes' });
    expect(await counter(registry, 'Service', 'RELIST')).toBeGreaterThanOrEqual(1);
  });

  it('resumes from bookmarks without relisting after history is compacted', async () => {
    server = await withServer({ bookmarkIntervalMs: 50 });
    const { recorder, registry } = startSource(server);
    await recorder.waitFor(() => true, 'initial snapshot');
    // Changes to other resources move the global resourceVersion past what the Service watch has seen;
    // only a bookmark tells it that nothing it watches changed in between.
    for (let i = 0; i < 5; i++) server.create(httpRoute(`r${i}`));
    await recorder.waitFor((s) => s.httpRoutes.length === 5, 'routes');
    const before = await counter(registry, 'Service', 'BOOKMARK');
    // Two bookmarks: the first one has surely been taken in before history is compacted.
    await eventually(
      async () => (await counter(registry, 'Service', 'BOOKMARK')) > before + 1,
      'two bookmarks',
    );
    server.expireHistory();
    server.dropWatches();
    server.create(service('after-compaction'));
    await recorder.waitFor((s) => s.get('Service', 'default', 'after-compaction') !== undefined, 'service');
    const serviceLists = server.requests.filter((r) => r.resource === 'services' && r.verb === 'list');
    expect(serviceLists).toHaveLength(1);
    expect(await counter(registry, 'Service', 'RELIST')).toBe(0);
  });

  it('turns a burst of 1,000 updates into a handful of snapshots ending in the final state', async () => {
    server = await withServer();
    server.create(service('busy'));
    const { recorder } = startSource(server, { debounceMs: 50, maxDebounceMs: 500 });
    await recorder.waitFor(() => true, 'initial snapshot');
    const before = recorder.snapshots.length;
    for (let i = 1; i <= 1000; i++) {
      server.patch('services', 'default', 'busy', { metadata: { labels: { n: String(i) } } });
      if (i % 100 === 0) await new Promise((r) => setImmediate(r));
    }
    await recorder.waitFor(
      (s) => s.get('Service', 'default', 'busy')?.metadata.labels?.n === '1000',
      'final update',
    );
    await new Promise((r) => setTimeout(r, 100));
    const burst = recorder.snapshots.length - before;
    expect(burst).toBeGreaterThanOrEqual(1);
    expect(burst).toBeLessThanOrEqual(10);
  });

  it('runs without the MCS and About CRDs and picks them up once installed', async () => {
    server = await withServer({
      crds: [
        'gatewayclasses.gateway.networking.k8s.io',
        'gateways.gateway.networking.k8s.io',
        'httproutes.gateway.networking.k8s.io',
        'referencegrants.gateway.networking.k8s.io',
      ],
    });
    const { source: src, recorder } = startSource(server);
    await recorder.waitFor(() => true, 'initial snapshot');
    expect(src.ready).toBe(true);
    expect(src.servedServiceImportKinds).toEqual([]);
    server.installCrd('serviceimports.multicluster.x-k8s.io', ['v1alpha1']);
    server.create({
      apiVersion: 'multicluster.x-k8s.io/v1alpha1',
      kind: 'ServiceImport',
      metadata: { name: 'web', namespace: 'default' },
      spec: { type: 'ClusterSetIP', ports: [{ port: 80 }] },
    });
    const snapshot = await recorder.waitFor((s) => s.serviceImports.length === 1, 'ServiceImport picked up');
    expect(snapshot.serviceImports[0]?.apiVersion).toBe('multicluster.x-k8s.io/v1alpha1');
    expect(src.servedServiceImportKinds).toEqual([{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport' }]);
  });

  it('reports a missing required CRD as a problem and stays unready', async () => {
    server = await withServer({ crds: [] });
    const { source: src } = startSource(server);
    await eventually(() => src.problems.length > 0, 'problems');
    expect(src.ready).toBe(false);
    expect(src.problems.join('\n')).toContain('gateways.gateway.networking.k8s.io (Gateway) is not served');
  });

  it('names the missing permission when RBAC denies a list, and recovers when it is granted', async () => {
    server = await withServer();
    server.setForbidden('secrets');
    const { source: src, recorder, logs } = startSource(server);
    await eventually(() => src.problems.some((p) => p.includes('secrets')), 'RBAC problem');
    expect(src.ready).toBe(false);
    expect(recorder.snapshots).toHaveLength(0);
    expect(src.problems).toHaveLength(1);
    expect(src.problems[0]).toContain('forbidden to list secrets in API group ""');
    expect(logs.lines.some((l) => l.level === 50 && l.msg.includes('secrets'))).toBe(true);
    server.clearForbidden();
    await recorder.waitFor(() => true, 'snapshot after grant');
    await eventually(() => src.ready, 'ready');
    expect(src.problems).toEqual([]);
  });

  it('stays ready when only an optional kind is denied, and says so', async () => {
    server = await withServer();
    server.setForbidden('serviceimports');
    const { source: src, recorder } = startSource(server);
    await recorder.waitFor(() => true, 'initial snapshot');
    await eventually(() => src.problems.length > 0, 'problem');
    expect(src.ready).toBe(true);
    expect(src.problems[0]).toContain(
      'forbidden to list serviceimports in API group "multicluster.x-k8s.io"',
    );
  });

  it('drops the objects of a CRD that is removed and picks them up again when it returns', async () => {
    server = await withServer();
    server.create({
      apiVersion: 'about.k8s.io/v1alpha1',
      kind: 'ClusterProperty',
      metadata: { name: 'cluster.clusterset.k8s.io' },
      spec: { value: 'east' },
    });
    const { recorder } = startSource(server);
    await recorder.waitFor((s) => s.clusterProperties.length === 1, 'initial snapshot');
    server.uninstallCrd('clusterproperties.about.k8s.io');
    await recorder.waitFor((s) => s.clusterProperties.length === 0, 'objects gone with the CRD');
    server.installCrd('clusterproperties.about.k8s.io');
    server.create({
      apiVersion: 'about.k8s.io/v1beta1',
      kind: 'ClusterProperty',
      metadata: { name: 'clusterset.k8s.io' },
      spec: { value: 'prod' },
    });
    const back = await recorder.waitFor((s) => s.clusterProperties.length === 1, 'CRD back');
    expect(back.clusterProperties[0]?.spec?.value).toBe('prod');
  });

  it('skips and logs a malformed object without losing the others', async () => {
    server = await withServer();
    server.create(httpRoute('good'));
    server.putUnvalidated('httproutes', {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'bad', namespace: 'default', uid: 'x' },
      spec: 'not-a-mapping',
    });
    const { source: src, recorder, logs } = startSource(server);
    const snapshot = await recorder.waitFor(() => true, 'initial snapshot');
    expect(snapshot.httpRoutes.map((r) => r.metadata.name)).toEqual(['good']);
    expect(logs.lines.some((l) => l.msg === 'skipping malformed object' && l.name === 'bad')).toBe(true);
    expect(src.problems).toEqual([
      'HTTPRoute default/bad is malformed and ignored: HTTPRoute bad: spec must be a mapping',
    ]);
    expect(src.ready).toBe(true);
    server.create(httpRoute('later'));
    await recorder.waitFor((s) => s.get('HTTPRoute', 'default', 'later') !== undefined, 'later route');
    server.delete('httproutes', 'default', 'bad');
    await eventually(() => src.problems.length === 0, 'problem cleared');
  });

  it('keeps retrying while the API server is down at start', async () => {
    server = await withServer();
    await server.stop();
    const { source: src, recorder } = startSource(server);
    await eventually(
      () => src.problems.some((p) => p.startsWith('API discovery failed')),
      'discovery problem',
    );
    expect(src.ready).toBe(false);
    await server.start();
    await recorder.waitFor(() => true, 'snapshot once the server is up');
    expect(src.ready).toBe(true);
  });

  it('logs a kind whose API server goes away when it starts failing, then at most once per backoff step', async () => {
    server = await withServer();
    server.create(gatewayClass());
    const { recorder, logs } = startSource(server, { backoffInitialMs: 20, backoffMaxMs: 1_000 });
    await recorder.waitFor(() => true, 'initial snapshot');
    const from = logs.lines.length;
    const started = Date.now();
    await server.stop();
    // Bounded real time: every kind retries (20 ms doubling to 1 s) many times meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const elapsedMs = Date.now() - started;
    const failures = logs.lines.slice(from).filter((l) => /^list\/watch (failed|still failing)/.test(l.msg));
    const byResource = new Map<string, number>();
    for (const line of failures)
      byResource.set(String(line.resource), (byResource.get(String(line.resource)) ?? 0) + 1);
    expect(byResource.size).toBeGreaterThan(3);
    for (const [resource, count] of byResource) {
      expect(count, resource).toBeLessThanOrEqual(1 + Math.ceil(elapsedMs / 1_000));
    }
    const still = failures.filter((l) => l.msg.startsWith('list/watch still failing'));
    expect(still.every((l) => Number(l.retries) >= 1)).toBe(true);

    await server.start();
    await eventually(() => logs.lines.some((l) => l.msg === 'list/watch works again'), 'recovery logged');
  });
});
