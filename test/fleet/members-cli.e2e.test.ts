import { mkdtempSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoServer, startEchoServer } from '../../src/demo/echo/echo-server.ts';
import type { FleetReport } from '../../src/fleet/fleet-report.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import type { KubeApiServer } from '../support/kube-api-server/index.ts';
import { gateway, gatewayClass, httpRoute, yamlDocs } from '../support/manifests.ts';
import { ExecPlugin, exportWeb, profileYaml, startMember } from './members-fixtures.ts';

/**
 * The gateway as a user runs it in fleet mode: `--manifests` with ClusterProfiles, `--clusterprofile-provider-file`
 * naming a real exec plugin, `--member-kubeconfigs` with a kubeconfig file; members are API servers speaking the
 * wire protocol, their exported Service's pods real echo servers. Traffic through the Gateway reaches every
 * member's pods; /config_dump lists the members and never a token.
 */
/**
 * An API server refuses loopback endpoint addresses (as kube-apiserver does), so the pods listen on the host's
 * first non-internal IPv4 address.
 */
function podAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    const found = list?.find((a) => a.family === 'IPv4' && !a.internal);
    if (found) return found.address;
  }
  throw new Error('this test needs a non-loopback IPv4 address for its pods');
}

describe('fleet mode from the command line', () => {
  const address = podAddress();
  const plugin = new ExecPlugin();
  const kubeconfigs = mkdtempSync(join(tmpdir(), 'csg-members-'));
  const pods: EchoServer[] = [];
  const servers: KubeApiServer[] = [];
  let gw: GatewayProcess;
  let port: number;

  beforeAll(async () => {
    for (const [pod, cluster] of [
      ['web-east', 'east'],
      ['web-west', 'west'],
      ['web-north', 'north'],
    ] as const) {
      pods.push(
        await startEchoServer({
          host: address,
          port: 0,
          identity: { namespace: 'shop', service: 'web', pod, cluster, zone: `${cluster}-a` },
        }),
      );
    }
    const east = await startMember(plugin, 'secret-token-east');
    const west = await startMember(plugin, 'secret-token-west');
    const north = await startMember(plugin, 'unused');
    north.acceptToken = (t) => t === 'secret-token-north';
    servers.push(east, west, north);
    exportWeb(east, address, 'east', pods[0]?.port);
    exportWeb(west, address, undefined, pods[1]?.port);
    exportWeb(north, address, 'north', pods[2]?.port);
    north.writeKubeconfig(join(kubeconfigs, 'north.yaml'), 'secret-token-north');
    port = await freePort();
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
        'profiles.yaml': [profileYaml('east', east.url), profileYaml('west', west.url)].join('---\n'),
      },
      args: [
        '--clusterprofile-provider-file',
        plugin.providerFile(),
        '--member-kubeconfigs',
        kubeconfigs,
        '--member-exec-timeout-ms',
        '10000',
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    for (const server of servers) await server.stop();
    for (const pod of pods) await pod.close();
    rmSync(kubeconfigs, { recursive: true, force: true });
    rmSync(plugin.dir, { recursive: true, force: true });
  });

  async function fleet(): Promise<FleetReport> {
    const dump = JSON.parse((await gw.adminGet('/config_dump')).body) as { fleet?: FleetReport };
    expect(dump.fleet).toBeDefined();
    return dump.fleet as FleetReport;
  }

  async function podsAnswering(n = 30): Promise<Set<string>> {
    const seen = new Set<string>();
    for (let i = 0; i < n; i++) {
      const res = await request(`http://127.0.0.1:${port}/`, { headers: { host: 'shop.example' } });
      const body = (await res.body.json()) as { pod?: string };
      if (res.statusCode === 200 && body.pod) seen.add(body.pod);
    }
    return seen;
  }

  it('serves every member’s exported pods through the Gateway and lists the members in /config_dump', async () => {
    await eventually(async () => {
      const report = await fleet();
      expect(report.members.map((m) => `${m.name}:${m.state}`)).toEqual([
        'east:synced',
        'north:synced',
        'west:synced',
      ]);
    }, 20_000);
    await eventually(
      async () => expect(await podsAnswering()).toEqual(new Set(['web-east', 'web-west', 'web-north'])),
      20_000,
    );
    const report = await fleet();
    expect(report.members.find((m) => m.name === 'north')?.origin).toEqual({
      kind: 'Kubeconfig',
      file: join(kubeconfigs, 'north.yaml'),
    });
    expect(report.members.find((m) => m.name === 'east')).toMatchObject({
      origin: { kind: 'ClusterProfile', namespace: 'fleet', name: 'east', provider: 'test-exec' },
      counts: { serviceExports: 1, endpointSlices: 1, endpoints: 1 },
    });
    const dump = (await gw.adminGet('/config_dump')).body;
    expect(dump).not.toContain('secret-token');
    expect(gw.output()).not.toContain('secret-token');
  });

  it('drops a member whose kubeconfig file is removed, and its pods with it', async () => {
    rmSync(join(kubeconfigs, 'north.yaml'));
    await eventually(async () => {
      expect((await fleet()).members.map((m) => m.name)).toEqual(['east', 'west']);
    }, 2_500);
    await eventually(async () => expect(await podsAnswering()).toEqual(new Set(['web-east', 'web-west'])));
  });

  it('drops a member whose ClusterProfile is deleted', async () => {
    await gw.writeManifest('profiles.yaml', profileYaml('east', servers[0]?.url ?? ''));
    await eventually(async () => {
      expect((await fleet()).members.map((m) => m.name)).toEqual(['east']);
    }, 2_500);
    await eventually(async () => expect(await podsAnswering()).toEqual(new Set(['web-east'])));
  });
});
