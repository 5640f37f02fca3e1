import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoServer, startEchoServer } from '../../src/demo/echo/echo-server.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import {
  type IndependentApiServer,
  type KubeObject,
  startIndependentApiServer,
} from '../support/independent-api-server.ts';
import { gateway, gatewayClass, httpRoute, yamlDocs } from '../support/manifests.ts';

/**
 * Issue 27 from outside: the compiled-as-shipped gateway in fleet mode, ClusterProfiles in a --manifests folder,
 * a provider file naming an exec plugin written here, members served by an API server that is not the project's
 * (test/support/independent-api-server.ts: paged lists, watches that end every 1.5 s without bookmarks, a 410
 * ERROR event on resume after compaction, ServiceExport only as v1alpha1, no About API). Traffic through the
 * Gateway and the east-west port reaches each member's pods, and follows their EndpointSlices.
 */
function podAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    const found = list?.find((a) => a.family === 'IPv4' && !a.internal);
    if (found) return found.address;
  }
  throw new Error('this test needs a non-loopback IPv4 address for its pods');
}

const TOKENS = { east: 'east-token-d41d8cd98f', west: 'west-token-0cc175b9c0' } as const;
type Cluster = keyof typeof TOKENS;

function slice(address: string, port: number): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-abc12', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [address], conditions: { ready: true, serving: true, terminating: false } }],
    ports: [{ name: 'http', port, protocol: 'TCP' }],
  };
}

describe('fleet members on an independent API server', () => {
  const address = podAddress();
  const dir = mkdtempSync(join(tmpdir(), 'csg-outside-fleet-'));
  const members = new Map<Cluster, IndependentApiServer>();
  const pods = new Map<string, EchoServer>();
  let gw: GatewayProcess;
  let port: number;
  let eastWestPort: number;

  const startPod = async (pod: string, cluster: Cluster) => {
    const server = await startEchoServer({
      host: address,
      port: 0,
      identity: { namespace: 'shop', service: 'web', pod, cluster, zone: `${cluster}-a` },
    });
    pods.set(pod, server);
    return server.port;
  };

  beforeAll(async () => {
    for (const cluster of ['east', 'west'] as const) {
      const member = await startIndependentApiServer({
        token: TOKENS[cluster],
        pageSize: 1,
        watchLifetimeMs: 1500,
      });
      members.set(cluster, member);
      // Unexported Services around the exported one: lists take several pages.
      for (const name of ['a-unexported', 'web', 'z-unexported']) {
        member.put({
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name, namespace: 'shop' },
          spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
        });
      }
      member.put({
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ServiceExport',
        metadata: { name: 'web', namespace: 'shop', creationTimestamp: '2026-01-01T00:00:00Z' },
      });
      member.put(slice(address, await startPod(`web-${cluster}`, cluster)));
    }
    // The exec plugin: a credential per member, chosen by the server the gateway hands it (provideClusterInfo).
    const tokens = Object.fromEntries([...members].map(([cluster, m]) => [m.url, TOKENS[cluster]]));
    const plugin = join(dir, 'credentials.mjs');
    writeFileSync(
      plugin,
      `const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO ?? '{}');
const tokens = ${JSON.stringify(tokens)};
process.stdout.write(JSON.stringify({
  apiVersion: 'client.authentication.k8s.io/v1',
  kind: 'ExecCredential',
  status: { token: tokens[info.spec?.cluster?.server] ?? 'unknown', expirationTimestamp: new Date(Date.now() + 600000).toISOString() },
}));
`,
    );
    const providers = join(dir, 'providers.json');
    writeFileSync(
      providers,
      JSON.stringify({
        providers: [
          {
            name: 'outside',
            execConfig: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: process.execPath,
              args: [plugin],
              provideClusterInfo: true,
              interactiveMode: 'Never',
            },
          },
        ],
      }),
    );
    // Plain http needs TLS checks off (the independent server has no TLS); without it the profile is refused, named.
    const profile = (name: string, server: string, plainHttpAllowed = true) => ({
      apiVersion: 'multicluster.x-k8s.io/v1alpha1',
      kind: 'ClusterProfile',
      metadata: { name, namespace: 'fleet' },
      spec: { displayName: name, clusterManager: { name: 'outside' } },
      status: {
        accessProviders: [
          {
            name: 'outside',
            cluster: { server, ...(plainHttpAllowed ? { 'insecure-skip-tls-verify': true } : {}) },
          },
        ],
      },
    });
    port = await freePort();
    eastWestPort = await freePort();
    gw = await startGateway({
      manifests: {
        'gateway.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', 'shop', [{ name: 'http', protocol: 'HTTP', port }]),
          httpRoute('web', 'shop', {
            parentRefs: [{ name: 'edge' }],
            rules: [
              {
                backendRefs: [
                  { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web', port: 80 },
                ],
              },
            ],
          }),
        ),
        'profiles.yaml': yamlDocs(
          profile('east', members.get('east')!.url),
          profile('west', members.get('west')!.url),
          profile('plain', members.get('east')!.url, false),
        ),
      },
      args: ['--clusterprofile-provider-file', providers, '--east-west-port', String(eastWestPort)],
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    for (const member of members.values()) await member.close();
    for (const pod of pods.values()) await pod.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const answering = async (url: string, host: string, n = 24): Promise<Set<string>> => {
    const seen = new Set<string>();
    for (let i = 0; i < n; i++) {
      const res = await request(url, { headers: { host } });
      const text = await res.body.text();
      if (res.statusCode === 200) seen.add((JSON.parse(text) as { pod: string }).pod);
    }
    return seen;
  };
  const north = () => answering(`http://127.0.0.1:${port}/`, 'shop.example');
  const eastWest = () => answering(`http://127.0.0.1:${eastWestPort}/`, 'web.shop.svc.clusterset.local');

  it('lists every page, derives the import and serves both members through the Gateway and east-west', async () => {
    await eventually(async () => expect(await north()).toEqual(new Set(['web-east', 'web-west'])), 20_000);
    // The east-west listener's table may be applied a moment after the north one.
    await eventually(async () => expect(await eastWest()).toEqual(new Set(['web-east', 'web-west'])), 10_000);
    for (const member of members.values()) {
      // Three Services one per page: at least three list requests for them alone.
      expect(member.counts.get('list') ?? 0).toBeGreaterThanOrEqual(5);
      expect(member.counts.get('unauthorized') ?? 0).toBe(0);
    }
    const dump = JSON.parse((await gw.adminGet('/config_dump')).body) as {
      fleet: { members: { name: string; state: string }[] };
      problems: string[];
    };
    expect(dump.fleet.members.map((m) => `${m.name}:${m.state}`)).toEqual(['east:synced', 'west:synced']);
    expect(dump.problems.join('\n')).toContain(
      'ClusterProfile fleet/plain: access provider outside: cluster.server is plain http: members are reached over https',
    );
  });

  it('follows a slice change made after the watches ended and resumed on their own', async () => {
    const east = members.get('east')!;
    await eventually(async () => expect(east.counts.get('watch') ?? 0).toBeGreaterThanOrEqual(6), 10_000);
    east.put(slice(address, await startPod('web-east-2', 'east')));
    await eventually(async () => expect(await north()).toEqual(new Set(['web-east-2', 'web-west'])), 10_000);
    expect(await eastWest()).toEqual(new Set(['web-east-2', 'web-west']));
  });

  it('relists after a 410 on resume and follows the change it missed', async () => {
    const west = members.get('west')!;
    west.put(slice(address, await startPod('web-west-2', 'west')), { unseen: true });
    west.compact();
    await eventually(
      async () => expect(await north()).toEqual(new Set(['web-east-2', 'web-west-2'])),
      10_000,
    );
    expect(west.counts.get('watch-410') ?? 0).toBeGreaterThanOrEqual(1);
  });

  it('never shows a member’s token', async () => {
    const dump = (await gw.adminGet('/config_dump')).body;
    const metrics = (await gw.adminGet('/metrics')).body;
    for (const token of Object.values(TOKENS)) {
      expect(dump).not.toContain(token);
      expect(metrics).not.toContain(token);
      expect(gw.output()).not.toContain(token);
    }
  });
});
