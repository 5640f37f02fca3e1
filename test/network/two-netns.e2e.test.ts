import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestNetns, waitForLine } from '../kube/netns.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import {
  gateway,
  gatewayClass,
  httpRoute,
  importedSlice,
  serviceImport,
  yamlDocs,
} from '../support/manifests.ts';
import { identityFiles, makeTrustDomain, networkTlsArgs } from '../support/network-certs.ts';

/**
 * Issue 41 with real separate networks: cluster west (its pod and its gateway) lives in a network namespace; its
 * pod listens on that namespace's loopback, which nothing outside can reach. Gateway east, on the host, knows
 * the pod's address from west's EndpointSlice and still serves west's pod, through west's network gateway on
 * the namespace's veth address, over mutual TLS.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const unavailable = TestNetns.unavailable();
if (unavailable && process.env['CI'])
  throw new Error(`the two-network-namespace test cannot run in CI: ${unavailable}`);
if (unavailable) console.warn(`skipping the two-network-namespace test: ${unavailable}`);

const NS = 'demo';
const NET_PORT = 15008;
const ADMIN_PORT = 9901;

const canConnect = (host: string, port: number) =>
  new Promise<boolean>((done) => {
    const socket = connect(port, host);
    socket.setTimeout(1000, () => {
      socket.destroy();
      done(false);
    });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });

/** A port free on the host a moment ago: the pod takes it inside the namespace, so the host has nothing there. */
let POD_PORT = 0;
const westSlice = () => importedSlice('web-west', 'web', NS, 'west', { port: POD_PORT, pod: 'web-west' });

describe.skipIf(unavailable !== undefined)('two gateways in two network namespaces', () => {
  let netns: TestNetns;
  let dir: string;
  let east: GatewayProcess;
  let eastPort: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csgw-netns-'));
    makeTrustDomain(dir, 'demo.local', ['east', 'west']);
    POD_PORT = await freePort();
    netns = new TestNetns(7);
    netns.create();
    const pod = netns.spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/demo/echo/main.ts',
        '--port',
        String(POD_PORT),
        '--namespace',
        NS,
        '--service',
        'web',
        '--pod',
        'web-west',
        '--cluster',
        'west',
      ],
      ROOT,
    );
    await waitForLine(pod, /^echo /, 30_000);
    const westDir = mkdtempSync(join(dir, 'west-'));
    writeFileSync(join(westDir, 'mc.yaml'), yamlDocs(serviceImport('web', NS), westSlice()));
    netns.spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/main.ts',
        '--manifests',
        westDir,
        '--cluster',
        'west',
        '--network',
        'net-west',
        '--address',
        '0.0.0.0',
        '--admin-address',
        netns.address,
        '--admin-port',
        String(ADMIN_PORT),
        '--network-gateway-port',
        String(NET_PORT),
        ...networkTlsArgs(identityFiles(dir, 'west')),
        '--log-level',
        'warn',
      ],
      ROOT,
    );
    await eventually(async () => {
      const ready = await fetch(`http://${netns.address}:${ADMIN_PORT}/readyz`);
      expect(ready.status).toBe(200);
    }, 40_000);
    eastPort = await freePort();
    east = await startGateway({
      args: ['--cluster', 'east', '--network', 'net-east', ...networkTlsArgs(identityFiles(dir, 'east'))],
      manifests: {
        'mc.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port: eastPort }]),
          serviceImport('web', NS),
          httpRoute('web', NS, {
            parentRefs: [{ name: 'edge' }],
            rules: [
              {
                backendRefs: [
                  { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web', port: 80 },
                ],
              },
            ],
          }),
          westSlice(),
          {
            apiVersion: 'multicluster.x-k8s.io/v1alpha1',
            kind: 'ClusterProfile',
            metadata: { name: 'west', namespace: 'fleet' },
            spec: { displayName: 'west', clusterManager: { name: 'test' } },
            status: {
              properties: [
                { name: 'network.clusterset-gateway.io', value: 'net-west' },
                { name: 'network-gateways.clusterset-gateway.io', value: `${netns.address}:${NET_PORT}` },
              ],
            },
          },
        ),
      },
    });
  }, 120_000);

  afterAll(async () => {
    await east?.stop();
    netns?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("the host cannot reach west's pod; gateway east serves it through west's network gateway", async () => {
    // The pod is on the namespace's loopback: neither its slice address nor the namespace's address reach it.
    expect(await canConnect('127.0.0.1', POD_PORT)).toBe(false);
    expect(await canConnect(netns.address, POD_PORT)).toBe(false);
    await eventually(async () => {
      for (let i = 0; i < 5; i++) {
        const response = await request(`http://127.0.0.1:${eastPort}/`);
        expect(response.statusCode).toBe(200);
        expect(((await response.body.json()) as { pod: string }).pod).toBe('web-west');
      }
    }, 20_000);
    const metrics = (await east.adminGet('/metrics')).body;
    expect(metrics).toMatch(
      /clusterset_gateway_network_tunnels_total\{direction="outbound",cluster="west",result="connected"\} [1-9]/,
    );
  });
});
