import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { FleetMembership } from '../../src/fleet/fleet-membership.ts';
import type { MemberView } from '../../src/fleet/member-view.ts';
import { readProviderFile } from '../../src/fleet/provider-file.ts';
import { FileSource } from '../../src/sources/file/file-source.ts';
import { createKubeSource } from '../../src/sources/kube/index.ts';
import { type KubeApiServer, startKubeApiServer } from '../support/kube-api-server/index.ts';
import { makePki } from '../tls/certs.ts';
import { byName, ExecPlugin, eventually, exportWeb, profileYaml, startMember } from './members-fixtures.ts';

/**
 * Fleet membership from ClusterProfiles in a manifests folder (read by the file source, as `--manifests` does),
 * a provider file naming a real exec plugin, and protocol-level API servers as members that accept only the
 * plugin's tokens.
 */
describe('fleet members from ClusterProfiles', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setup(options: { execTimeoutMs?: number; now?: () => number } = {}) {
    const plugin = new ExecPlugin();
    const manifests = mkdtempSync(join(tmpdir(), 'csg-fleet-'));
    mkdirSync(manifests, { recursive: true });
    writeFileSync(join(manifests, 'ns.yaml'), 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: fleet\n');
    const logger = pino({ level: 'silent' });
    const registry = new Registry();
    const membership = new FleetMembership({
      logger,
      registry,
      providers: readProviderFile(plugin.providerFile()),
      timing: { backoffInitialMs: 50, backoffMaxMs: 300, execTimeoutMs: options.execTimeoutMs ?? 5_000 },
      ...(options.now ? { now: options.now } : {}),
    });
    let views: readonly MemberView[] = [];
    await membership.start((next) => {
      views = next;
    });
    const source = new FileSource({ dir: manifests, logger, debounceMs: 0 });
    await source.start((snapshot) => membership.setClusterProfiles(snapshot.list('ClusterProfile')));
    cleanups.push(async () => {
      await source.stop();
      await membership.stop();
      rmSync(manifests, { recursive: true, force: true });
      rmSync(plugin.dir, { recursive: true, force: true });
    });
    const member = async (token: string, tls?: { cert: string; key: string }): Promise<KubeApiServer> => {
      const server = await startMember(plugin, token, tls);
      cleanups.push(() => server.stop());
      return server;
    };
    return { plugin, manifests, membership, member, registry, views: () => views };
  }

  it('turns profiles with a configured provider into synced members, named by their ClusterProperty', async () => {
    const { plugin, manifests, member, views } = await setup();
    const east = await member('token-east');
    const west = await member('token-west');
    exportWeb(east, '10.1.0.1', 'east-cluster');
    exportWeb(west, '10.2.0.1');
    writeFileSync(
      join(manifests, 'profiles.yaml'),
      [
        profileYaml('east', east.url, { properties: { 'topology.kubernetes.io/region': 'eu-west' } }),
        profileYaml('west', west.url),
        profileYaml('other', 'https://10.9.9.9:6443', { provider: 'someone-elses-plugin' }),
      ].join('---\n'),
    );
    const found = await eventually(views, (v) => {
      expect(v.map((m) => `${m.name}:${m.state}`).sort()).toEqual(['east-cluster:synced', 'west:synced']);
    });
    const e = byName(found, 'east-cluster');
    expect(e.origin).toEqual({
      kind: 'ClusterProfile',
      namespace: 'fleet',
      name: 'east',
      provider: 'test-exec',
    });
    expect(e.server).toBe(east.url);
    expect(e.properties).toMatchObject({
      'topology.kubernetes.io/region': 'eu-west',
      'cluster.clusterset.k8s.io': 'east-cluster',
    });
    expect(e.serviceExports.map((x) => `${x.metadata.namespace}/${x.metadata.name}`)).toEqual(['shop/web']);
    expect(e.services.map((x) => `${x.metadata.namespace}/${x.metadata.name}`)).toContain('shop/web');
    expect(e.endpointSlices.map((x) => x.endpoints?.[0]?.addresses[0])).toEqual(['10.1.0.1']);
    expect(e.lastSyncTime).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(byName(found, 'west').endpointSlices.map((x) => x.endpoints?.[0]?.addresses[0])).toEqual([
      '10.2.0.1',
    ]);
    // The plugin ran once per member and was told which cluster (provideClusterInfo), never interactively.
    const servers = plugin.runs().map((r) => r.spec.cluster?.server);
    expect(new Set(servers)).toEqual(new Set([east.url, west.url]));
    expect(
      plugin.runs().every((r) => r.apiVersion === 'client.authentication.k8s.io/v1' && !r.spec.interactive),
    ).toBe(true);
    // Every request carried the plugin's token.
    expect(east.requests.every((r) => r.token === 'token-east')).toBe(true);

    // A watch event in a member reaches its view.
    east.patch('endpointslices.discovery.k8s.io', 'shop', 'web-1', {
      endpoints: [{ addresses: ['10.1.0.2'], conditions: { ready: true } }],
    });
    await eventually(views, (v) => {
      expect(byName(v, 'east-cluster').endpointSlices.map((x) => x.endpoints?.[0]?.addresses[0])).toEqual([
        '10.1.0.2',
      ]);
    });

    // A deleted profile takes its member away within 2 s.
    writeFileSync(join(manifests, 'profiles.yaml'), profileYaml('west', west.url));
    const started = Date.now();
    await eventually(views, (v) => expect(v.map((m) => m.name)).toEqual(['west']), 2_000);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('marks a member that goes down stale, keeps its objects, and resyncs when it comes back', async () => {
    const { manifests, member, registry, views } = await setup();
    const east = await member('token-east');
    exportWeb(east, '10.1.0.1');
    writeFileSync(join(manifests, 'profiles.yaml'), profileYaml('east', east.url));
    await eventually(views, (v) => expect(byName(v, 'east').state).toBe('synced'));
    const errors = async () =>
      (await registry.getSingleMetric('clusterset_gateway_fleet_watch_errors_total')?.get())?.values.find(
        (v) => v.labels.cluster === 'east',
      )?.value ?? 0;
    expect(await errors()).toBe(0);

    await east.stop();
    const down = await eventually(views, (v) => expect(byName(v, 'east').state).toBe('stale'));
    expect(byName(down, 'east').reason).toMatch(/unreachable/);
    expect(byName(down, 'east').endpointSlices).toHaveLength(1);
    expect(await errors()).toBeGreaterThan(0);

    east.patch('endpointslices.discovery.k8s.io', 'shop', 'web-1', {
      endpoints: [{ addresses: ['10.1.0.9'], conditions: { ready: true } }],
    });
    await east.start();
    const back = await eventually(views, (v) => {
      expect(byName(v, 'east').state).toBe('synced');
      expect(byName(v, 'east').endpointSlices.map((x) => x.endpoints?.[0]?.addresses[0])).toEqual([
        '10.1.0.9',
      ]);
    });
    expect(byName(back, 'east').reason).toBeUndefined();
  });

  it('runs the plugin again when the server refuses the token (401) and when the credential expires', async () => {
    let nowMs = Date.now();
    const { plugin, manifests, member, views } = await setup({ now: () => nowMs });
    plugin.set({ expiresAt: new Date(nowMs + 3_600_000).toISOString() });
    const east = await member('token-1');
    exportWeb(east, '10.1.0.1');
    writeFileSync(join(manifests, 'profiles.yaml'), profileYaml('east', east.url));
    await eventually(views, (v) => expect(byName(v, 'east').state).toBe('synced'));
    const runsAtStart = plugin.runs().length;

    // Revoked: the server now wants token-2; the watch is cut, the next request gets 401, the plugin reruns.
    plugin.set({ tokens: { [east.url]: 'token-2' } });
    east.dropWatches();
    await eventually(
      () => east.requests.filter((r) => r.token === 'token-2').length,
      (n) => expect(n).toBeGreaterThan(0),
    );
    expect(east.unauthorizedCount).toBeGreaterThan(0);
    await eventually(views, (v) => expect(byName(v, 'east').state).toBe('synced'));
    const runsAfter401 = plugin.runs().length;
    expect(runsAfter401).toBeGreaterThan(runsAtStart);

    // Expiry (on the gateway's clock): the next request runs the plugin first, without waiting for a 401.
    plugin.set({ tokens: { [east.url]: 'token-3' }, expiresAt: new Date(nowMs + 7_200_000).toISOString() });
    const refusedBefore = east.unauthorizedCount;
    nowMs += 3_600_000;
    east.dropWatches();
    await eventually(
      () => east.requests.filter((r) => r.token === 'token-3').length,
      (n) => expect(n).toBeGreaterThan(0),
    );
    // The old token was never sent after expiry, so no 401 was needed.
    expect(east.unauthorizedCount).toBe(refusedBefore);
  });

  it('reports a failing, garbage-printing, hanging or expired-token plugin without leaking the secret', async () => {
    const { plugin, manifests, member, views } = await setup({ execTimeoutMs: 3_000 });
    const east = await member('token-secret-east');
    writeFileSync(join(manifests, 'profiles.yaml'), profileYaml('east', east.url));
    const cases: [string, RegExp][] = [
      ['fail', /exited with code 3/],
      ['garbage', /^not an ExecCredential: .* printed something that is not JSON/],
      ['notcred', /^not an ExecCredential: .* printed an object of another kind/],
      ['hang', /did not finish within 3000 ms/],
      ['expired', /returned a credential that expired/],
    ];
    for (const [mode, reason] of cases) {
      plugin.set({ mode });
      const seen = await eventually(views, (v) => expect(byName(v, 'east').reason ?? '').toMatch(reason));
      const text = JSON.stringify(seen);
      expect(text).not.toContain('token-secret-east');
      expect(text).not.toContain('stderr-secret');
      // Never synced and failing: an error, not a connection under way.
      expect(byName(seen, 'east').state).toBe('error');
    }
    plugin.set({ mode: 'ok' });
    await eventually(views, (v) => expect(byName(v, 'east').state).toBe('synced'));
  });

  it('refuses a server whose certificate the profile CA does not sign, and connects with the right CA', async () => {
    const pki = makePki();
    const { manifests, member, views } = await setup();
    const east = await member('token-east', pki.leaf('apiserver', ['DNS:localhost', 'IP:127.0.0.1']));
    exportWeb(east, '10.1.0.1');
    const caData = (pem: string) => Buffer.from(pem).toString('base64');
    writeFileSync(
      join(manifests, 'profiles.yaml'),
      profileYaml('east', east.url, { caData: caData(pki.otherCa.cert) }),
    );
    const wrong = await eventually(views, (v) =>
      expect(byName(v, 'east').reason ?? '').toMatch(/certificate/i),
    );
    expect(byName(wrong, 'east').state).toBe('error');
    expect(east.requests).toHaveLength(0);

    writeFileSync(
      join(manifests, 'profiles.yaml'),
      profileYaml('east', east.url, { caData: caData(pki.ca.cert) }),
    );
    await eventually(views, (v) => expect(byName(v, 'east').state).toBe('synced'));
  });

  it('refuses the second member claiming a name, and reports a member without the ServiceExport CRD', async () => {
    const { manifests, member, views } = await setup();
    const first = await member('token-a');
    exportWeb(first, '10.1.0.1', 'prod');
    writeFileSync(join(manifests, 'a.yaml'), profileYaml('a', first.url));
    await eventually(views, (v) => expect(byName(v, 'prod').state).toBe('synced'));

    const second = await member('token-b');
    second.uninstallCrd('serviceexports.multicluster.x-k8s.io');
    second.create({
      apiVersion: 'about.k8s.io/v1alpha1',
      kind: 'ClusterProperty',
      metadata: { name: 'cluster.clusterset.k8s.io' },
      spec: { value: 'prod' },
    });
    writeFileSync(join(manifests, 'b.yaml'), profileYaml('b', second.url, { unhealthy: true }));
    const both = await eventually(views, (v) => {
      expect(v.map((m) => `${m.name}:${m.state}`)).toEqual(['prod:synced', 'prod:refused']);
    });
    expect(both[1]?.reason).toBe('cluster name "prod" is already claimed by ClusterProfile fleet/a');
    expect(both[1]?.endpointSlices).toEqual([]);

    // Once the first is gone, the second is the cluster; it serves no ServiceExports, and its hub says unhealthy.
    rmSync(join(manifests, 'a.yaml'));
    const alone = await eventually(views, (v) =>
      expect(v.map((m) => `${m.name}:${m.state}`)).toEqual(['prod:synced']),
    );
    expect(alone[0]?.reason).toMatch(/ControlPlaneHealthy=False \(Unreachable: agent lost\)/);
    expect(alone[0]?.reason).toMatch(/serves no ServiceExport CRD/);
  });
});

describe('fleet members from a hub API server', () => {
  it('follows ClusterProfiles the kube source watches on the hub: status written, then the profile deleted', async () => {
    const plugin = new ExecPlugin();
    const hub = await startKubeApiServer({ bookmarkIntervalMs: 200 });
    const member = await startMember(plugin, 'token-member');
    exportWeb(member, '10.3.0.1');
    const logger = pino({ level: 'silent' });
    const membership = new FleetMembership({
      logger,
      providers: readProviderFile(plugin.providerFile()),
      timing: { backoffInitialMs: 50, backoffMaxMs: 300 },
    });
    let views: readonly MemberView[] = [];
    await membership.start((next) => {
      views = next;
    });
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(hub.kubeconfigYaml());
    const source = createKubeSource({
      kubeConfig,
      logger,
      debounceMs: 20,
      backoffInitialMs: 20,
      backoffMaxMs: 200,
    });
    await source.start((snapshot) => membership.setClusterProfiles(snapshot.list('ClusterProfile')));
    try {
      hub.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fleet' } });
      hub.create({
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ClusterProfile',
        metadata: { name: 'south', namespace: 'fleet' },
        spec: { displayName: 'south', clusterManager: { name: 'test' } },
      });
      // The cluster manager fills the status later, as OCM's registration controller does.
      hub.patch(
        'clusterprofiles.multicluster.x-k8s.io',
        'fleet',
        'south',
        {
          status: {
            accessProviders: [
              { name: 'test-exec', cluster: { server: member.url, 'insecure-skip-tls-verify': true } },
            ],
            properties: [{ name: 'topology.kubernetes.io/region', value: 'sa-east-1' }],
          },
        },
        'status',
      );
      const synced = await eventually(
        () => views,
        (v) => expect(byName(v, 'south').state).toBe('synced'),
      );
      expect(byName(synced, 'south').properties['topology.kubernetes.io/region']).toBe('sa-east-1');
      expect(byName(synced, 'south').endpointSlices).toHaveLength(1);
      expect(membership.problems).toEqual([]);

      hub.delete('clusterprofiles.multicluster.x-k8s.io', 'fleet', 'south');
      await eventually(
        () => views,
        (v) => expect(v).toEqual([]),
        2_000,
      );
    } finally {
      await source.stop();
      await membership.stop();
      await member.stop();
      await hub.stop();
      rmSync(plugin.dir, { recursive: true, force: true });
    }
  });
});
