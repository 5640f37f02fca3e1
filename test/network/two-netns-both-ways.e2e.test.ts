import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestNetns, waitForLine } from '../kube/netns.ts';
import { builtProgram, eventually } from '../support/gateway-process.ts';
import { gateway, gatewayClass, httpRoute, serviceImport, yamlDocs } from '../support/manifests.ts';
import { identityFiles, makeTrustDomain, networkTlsArgs } from '../support/network-certs.ts';
import { kill, NetnsPair, type NetnsSide, type SideName } from './netns-pair.ts';
import { counterValue } from './peer-client.ts';

/**
 * Issue 41 on two real networks, both ways: clusters east and west each live in a network namespace (their pod
 * and their gateway), joined by one veth pair that carries only gateway-to-gateway traffic. Each pod listens on
 * an address of its own namespace's loopback, which the other side cannot route to, yet each gateway knows the
 * other cluster's pod by that address (its EndpointSlice). Certificates come from scripts/network-certs.sh.
 *
 * Three ServiceImports on each side, each with a ClusterSelectionPolicy, served by the same two pods:
 * `web` (home first, then the other cluster), `far` (the other cluster first, then home) and `home` (this
 * cluster only: the boundary).
 */
const ROOT = resolve(import.meta.dirname, '../..');
const unavailable = TestNetns.unavailable();
if (unavailable && process.env['CI'])
  throw new Error(`the two-way network-namespace test cannot run in CI: ${unavailable}`);
if (unavailable) console.warn(`skipping the two-way network-namespace test: ${unavailable}`);

const NS = 'demo';
// Each namespace has its own ports: these never meet the host's.
const HTTP_PORT = 25100;
const ADMIN_PORT = 25101;
const NET_PORT = 25102;
const POD_PORT = 25103;
const SERVICES = ['web', 'far', 'home'] as const;
const other = (side: SideName): SideName => (side === 'east' ? 'west' : 'east');

function podSlice(service: string, cluster: SideName, side: NetnsSide): unknown {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${service}-${cluster}`,
      namespace: NS,
      labels: {
        'multicluster.kubernetes.io/service-name': service,
        'multicluster.kubernetes.io/source-cluster': cluster,
      },
    },
    addressType: 'IPv4',
    endpoints: [
      {
        addresses: [side.podAddress],
        conditions: { ready: true },
        targetRef: { kind: 'Pod', name: `web-${cluster}`, namespace: NS },
      },
    ],
    ports: [{ name: 'http', protocol: 'TCP', port: POD_PORT }],
  };
}

function policy(service: string, tiers: unknown[]): unknown {
  return {
    apiVersion: 'policy.clusterset-gateway.io/v1alpha1',
    kind: 'ClusterSelectionPolicy',
    metadata: { name: service, namespace: NS },
    spec: {
      targetRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: service }],
      tiers,
      fallback: 'None',
    },
  };
}

describe.skipIf(unavailable !== undefined)('two gateways in two network namespaces, both ways', () => {
  const net = new NetnsPair();
  const sides: Record<SideName, NetnsSide> = { east: net.east, west: net.west };
  const pods: Partial<Record<SideName, ChildProcess>> = {};
  const gateways: Partial<Record<SideName, ChildProcess>> = {};
  const manifestDirs: Partial<Record<SideName, string>> = {};
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 4 });
  let dir = '';

  function manifests(self: SideName): string {
    const peer = other(self);
    return yamlDocs(
      gatewayClass(),
      gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port: HTTP_PORT }]),
      ...SERVICES.flatMap((service) => [
        serviceImport(service, NS),
        httpRoute(service, NS, {
          parentRefs: [{ name: 'edge' }],
          hostnames: [`${service}.example`],
          rules: [
            {
              backendRefs: [
                { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: service, port: 80 },
              ],
            },
          ],
        }),
        podSlice(service, 'east', net.east),
        podSlice(service, 'west', net.west),
      ]),
      policy('web', [
        { name: 'home', sameCluster: true },
        { name: 'away', clusters: [peer] },
      ]),
      policy('far', [
        { name: 'away', clusters: [peer] },
        { name: 'home', sameCluster: true },
      ]),
      policy('home', [{ name: 'home', sameCluster: true }]),
      {
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ClusterProfile',
        metadata: { name: peer, namespace: 'fleet' },
        spec: { displayName: peer, clusterManager: { name: 'test' } },
        status: {
          properties: [
            { name: 'network.clusterset-gateway.io', value: `net-${peer}` },
            {
              name: 'network-gateways.clusterset-gateway.io',
              value: `${sides[peer].peerAddress}:${NET_PORT}`,
            },
          ],
        },
      },
    );
  }

  async function startPod(self: SideName): Promise<void> {
    const pod = net.spawn(
      sides[self],
      process.execPath,
      [
        builtProgram('demo/echo/main.js'),
        '--host',
        sides[self].podAddress,
        '--port',
        String(POD_PORT),
        '--namespace',
        NS,
        '--service',
        'web',
        '--pod',
        `web-${self}`,
        '--cluster',
        self,
      ],
      ROOT,
    );
    pods[self] = pod;
    await waitForLine(pod, /^echo /, 30_000);
  }

  async function startGateway(self: SideName): Promise<void> {
    const side = sides[self];
    const child = net.spawn(
      side,
      process.execPath,
      [
        builtProgram(),
        '--manifests',
        manifestDirs[self]!,
        '--cluster',
        self,
        '--network',
        `net-${self}`,
        '--address',
        '0.0.0.0',
        '--admin-address',
        side.address,
        '--admin-port',
        String(ADMIN_PORT),
        '--network-gateway-port',
        String(NET_PORT),
        ...networkTlsArgs(identityFiles(dir, self)),
        '--outlier-base-ejection-ms',
        '300',
        '--avoidance-ms',
        '200',
        '--health-check-interval-ms',
        '500',
        '--log-level',
        'warn',
      ],
      ROOT,
    );
    gateways[self] = child;
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`gateway ${self} exited: ${output}`);
      const ready = await fetch(`http://${side.address}:${ADMIN_PORT}/readyz`);
      expect(ready.status).toBe(200);
    }, 40_000);
  }

  const get = async (self: SideName, service: string): Promise<string> => {
    const response = await request(`http://${sides[self].address}:${HTTP_PORT}/`, {
      dispatcher: agent,
      headers: { host: `${service}.example` },
    });
    const text = await response.body.text();
    if (response.statusCode !== 200) return String(response.statusCode);
    return (JSON.parse(text) as { cluster: string }).cluster;
  };
  /** Who answered n requests in a row: cluster names, or the status when not 200. */
  const answers = async (self: SideName, service: string, n = 10): Promise<Record<string, number>> => {
    const seen: Record<string, number> = {};
    for (let i = 0; i < n; i++) {
      const key = await get(self, service);
      seen[key] = (seen[key] ?? 0) + 1;
    }
    return seen;
  };
  const metrics = async (self: SideName): Promise<string> =>
    (await fetch(`http://${sides[self].address}:${ADMIN_PORT}/metrics`)).text();
  const tunnels = async (self: SideName, labels: string): Promise<number> =>
    counterValue(await metrics(self), 'clusterset_gateway_network_tunnels_total', labels);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csgw-netns2-'));
    makeTrustDomain(dir, 'demo.local', ['east', 'west']);
    net.create();
    for (const self of ['east', 'west'] as const) {
      manifestDirs[self] = join(dir, `manifests-${self}`);
      mkdirSync(manifestDirs[self]!);
      writeFileSync(join(manifestDirs[self]!, 'mc.yaml'), manifests(self));
    }
    await Promise.all([startPod('east'), startPod('west'), startGateway('east'), startGateway('west')]);
  }, 90_000);

  afterAll(async () => {
    await agent.close();
    net.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("neither side can reach the other side's pod; each reaches its own", () => {
    for (const self of ['east', 'west'] as const) {
      const peer = sides[other(self)];
      expect(
        net.probe(sides[self], [
          [sides[self].podAddress, POD_PORT],
          [peer.podAddress, POD_PORT],
          // What it can reach of the other side: its network gateway, on the east-west link.
          [peer.peerAddress, NET_PORT],
        ]),
      ).toEqual(['open', 'ENETUNREACH', 'open']);
    }
  });

  it("traffic for the other cluster flows through that cluster's network gateway, over mutual TLS, both ways", async () => {
    for (const self of ['east', 'west'] as const) {
      const peer = other(self);
      await eventually(async () => expect(await answers(self, 'far')).toEqual({ [peer]: 10 }), 20_000);
      expect(await answers(self, 'web')).toEqual({ [self]: 10 });
      // The source opened tunnels to the peer cluster; the peer's gateway relayed them, for a client whose
      // certificate said it is `self` (the label comes from the verified SPIFFE ID).
      expect(
        await tunnels(self, `direction="outbound",cluster="${peer}",result="connected"`),
      ).toBeGreaterThan(0);
      expect(await tunnels(peer, `direction="inbound",cluster="${self}",result="relayed"`)).toBeGreaterThan(
        0,
      );
    }
  });

  it("a side whose pod dies sends its traffic through the other side's gateway; the boundary holds", async () => {
    for (const self of ['east', 'west'] as const) {
      const peer = other(self);
      await kill(pods[self]!);
      // Within the request: a refused connect to the home pod is retried on the next tier, the peer cluster.
      expect(await answers(self, 'web')).toEqual({ [peer]: 10 });
      // `home` may use this cluster only: never the peer's healthy pod. Until a health check marks the pod down
      // its refused connections answer 502 (tried and failed), then 503 (nothing healthy inside the boundary).
      const home = await answers(self, 'home');
      expect(Object.keys(home).filter((key) => key !== '502' && key !== '503')).toEqual([]);
      await eventually(async () => expect(await answers(self, 'home', 5)).toEqual({ '503': 5 }), 10_000);
      const selfMetrics = await metrics(self);
      expect(
        counterValue(
          selfMetrics,
          'clusterset_gateway_cluster_selection_boundary_refusals_total',
          `policy="${NS}/home"`,
        ),
      ).toBeGreaterThan(0);
      // The peer's `far` puts this cluster first: this gateway refuses (no healthy pod), the peer fails over home.
      expect(await answers(peer, 'far')).toEqual({ [peer]: 10 });
      expect(
        counterValue(
          await metrics(self),
          'clusterset_gateway_network_gateway_refused_total',
          'reason="no-healthy-endpoint"',
        ),
      ).toBeGreaterThan(0);
      await startPod(self);
      await eventually(async () => expect(await answers(self, 'web', 5)).toEqual({ [self]: 5 }), 20_000);
      await eventually(async () => expect(await answers(peer, 'far', 5)).toEqual({ [self]: 5 }), 20_000);
    }
  }, 60_000);

  it("a side whose network gateway dies: the other side keeps serving from its own pods, and only that gateway reaches the side's pods; restarted, it carries traffic again", async () => {
    for (const self of ['west', 'east'] as const) {
      const peer = other(self);
      await eventually(async () => expect(await answers(peer, 'far', 5)).toEqual({ [self]: 5 }), 20_000);
      await kill(gateways[self]!);
      // `far` tries the dead gateway first: a failed connect, retried home within the request, no 5xx.
      expect(await answers(peer, 'far', 20)).toEqual({ [peer]: 20 });
      // Its pod is alive, but nothing but its gateway can reach it: with the peer's own pod gone too, every
      // request is tried and fails (502; both tiers hold every cluster, so the usual panic rule applies).
      await kill(pods[peer]!);
      expect(await answers(peer, 'web')).toEqual({ '502': 10 });
      if (self === 'east') continue; // the last step: nothing runs after it, afterAll cleans up
      await Promise.all([startPod(peer), startGateway(self)]);
      await eventually(async () => expect(await answers(peer, 'far', 5)).toEqual({ [self]: 5 }), 20_000);
      await eventually(async () => expect(await answers(peer, 'web', 5)).toEqual({ [peer]: 5 }), 20_000);
    }
  }, 90_000);
});
