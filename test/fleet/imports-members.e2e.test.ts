import { mkdtempSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoServer, startEchoServer } from '../../src/demo/echo/echo-server.ts';
import type { FleetReport } from '../../src/fleet/fleet-report.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { type KubeApiServer, startKubeApiServer } from '../support/kube-api-server/index.ts';
import { gateway, gatewayClass, yamlDocs } from '../support/manifests.ts';

/**
 * Derived imports from members that are API servers speaking the wire protocol, as a user runs it
 * (`--member-kubeconfigs`, the east-west listener): the server sets each ServiceExport's creationTimestamp, so
 * the export created first wins a conflict whatever the clusters' names; a user's edit on a member (a new
 * EndpointSlice) reaches the east-west listener.
 */
const HOST = 'web.shop.svc.clusterset.local';

function podAddress(): string {
  // An API server refuses loopback endpoint addresses, as kube-apiserver does.
  for (const list of Object.values(networkInterfaces())) {
    const found = list?.find((a) => a.family === 'IPv4' && !a.internal);
    if (found) return found.address;
  }
  throw new Error('this test needs a non-loopback IPv4 address for its pods');
}

function exportWeb(
  server: KubeApiServer,
  address: string,
  pod: EchoServer,
  service: { port: number; headless?: boolean },
): void {
  server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
  server.create({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      ports: [{ name: 'http', port: service.port, protocol: 'TCP' }],
      ...(service.headless ? { clusterIP: 'None' } : {}),
    },
  });
  server.create({
    apiVersion: 'multicluster.x-k8s.io/v1beta1',
    kind: 'ServiceExport',
    metadata: { name: 'web', namespace: 'shop' },
  });
  addSlice(server, 'web-1', address, pod);
}

function addSlice(server: KubeApiServer, name: string, address: string, pod: EchoServer): void {
  server.create({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [address], conditions: { ready: true } }],
    ports: [{ name: 'http', port: pod.port, protocol: 'TCP' }],
  });
}

describe('derived imports from member API servers', () => {
  const address = podAddress();
  const kubeconfigs = mkdtempSync(join(tmpdir(), 'csg-imports-'));
  const pods = new Map<string, EchoServer>();
  const servers = new Map<string, KubeApiServer>();
  let gw: GatewayProcess;
  let eastWestPort: number;

  beforeAll(async () => {
    for (const [pod, cluster] of [
      ['web-zulu', 'zulu'],
      ['web-zulu-2', 'zulu'],
      ['web-alpha', 'alpha'],
    ] as const) {
      pods.set(
        pod,
        await startEchoServer({
          host: address,
          port: 0,
          identity: { namespace: 'shop', service: 'web', pod, cluster, zone: `${cluster}-a` },
        }),
      );
    }
    for (const name of ['zulu', 'alpha']) {
      const server = await startKubeApiServer({ bookmarkIntervalMs: 200 });
      server.acceptToken = (t) => t === `token-${name}`;
      servers.set(name, server);
    }
    const zulu = servers.get('zulu') as KubeApiServer;
    const alpha = servers.get('alpha') as KubeApiServer;
    exportWeb(zulu, address, pods.get('web-zulu') as EchoServer, { port: 80 });
    // creationTimestamp has one-second resolution: alpha's export is created in a later second than zulu's.
    await sleep(1100);
    exportWeb(alpha, address, pods.get('web-alpha') as EchoServer, { port: 8080, headless: true });
    zulu.writeKubeconfig(join(kubeconfigs, 'zulu.yaml'), 'token-zulu');
    alpha.writeKubeconfig(join(kubeconfigs, 'alpha.yaml'), 'token-alpha');
    eastWestPort = await freePort();
    gw = await startGateway({
      manifests: {
        'gateway.yaml': yamlDocs(gatewayClass(), gateway('edge', 'shop', [])),
      },
      args: [
        '--member-kubeconfigs',
        kubeconfigs,
        '--east-west-port',
        String(eastWestPort),
        '--write-export-status',
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    for (const server of servers.values()) await server.stop();
    for (const pod of pods.values()) await pod.close();
    rmSync(kubeconfigs, { recursive: true, force: true });
  });

  async function fleet(): Promise<FleetReport> {
    const dump = JSON.parse((await gw.adminGet('/config_dump')).body) as { fleet?: FleetReport };
    expect(dump.fleet).toBeDefined();
    return dump.fleet as FleetReport;
  }

  async function podsAnswering(n = 30): Promise<Set<string>> {
    const seen = new Set<string>();
    for (let i = 0; i < n; i++) {
      const res = await request(`http://127.0.0.1:${eastWestPort}/`, { headers: { host: HOST } });
      const body = (await res.body.json()) as { pod?: string };
      if (res.statusCode === 200 && body.pod) seen.add(body.pod);
    }
    return seen;
  }

  it('the export created first wins: its port and type are the import’s; both exports carry the conflict', async () => {
    await eventually(async () => {
      const report = await fleet();
      expect(report.members.map((m) => `${m.name}:${m.state}`)).toEqual(['alpha:synced', 'zulu:synced']);
      expect(report.imports).toHaveLength(1);
    }, 20_000);
    const report = await fleet();
    expect(report.imports[0]).toMatchObject({
      namespace: 'shop',
      name: 'web',
      specFrom: 'members',
      oldestExport: 'zulu',
      clusters: ['zulu', 'alpha'],
      spec: { type: 'ClusterSetIP', ports: [{ name: 'http', protocol: 'TCP', port: 80 }] },
      conflicts: [{ cluster: 'alpha', reasons: ['PortConflict', 'TypeConflict'] }],
    });
    const conflict = (cluster: string) =>
      report.exports.find((e) => e.cluster === cluster)?.conditions.find((c) => c.type === 'Conflict');
    expect(conflict('alpha')).toMatchObject({ status: 'True', reason: 'PortConflict,TypeConflict' });
    expect(conflict('zulu')).toMatchObject({ status: 'True', reason: 'PortConflict,TypeConflict' });
    // The conflict costs alpha nothing in the data plane: both clusters' pods answer on the east-west name.
    await eventually(
      async () => expect(await podsAnswering()).toEqual(new Set(['web-zulu', 'web-alpha'])),
      20_000,
    );
    const metrics = (await gw.adminGet('/metrics')).body;
    expect(metrics).toContain('clusterset_gateway_fleet_service_exports{state="conflict"} 2');
  });

  it('--write-export-status writes each export’s conditions to its member, keeping other controllers’ conditions', async () => {
    const conditionsOn = (cluster: string) =>
      (
        (servers.get(cluster) as KubeApiServer).get('serviceexports', 'shop', 'web') as {
          status?: {
            conditions?: { type: string; status: string; reason: string; lastTransitionTime?: string }[];
          };
        }
      ).status?.conditions ?? [];
    await eventually(async () => {
      expect(conditionsOn('alpha').map((c) => `${c.type}=${c.status}:${c.reason}`)).toEqual([
        'Valid=True:Valid',
        'Ready=True:Exported',
        'Conflict=True:PortConflict,TypeConflict',
      ]);
      expect(conditionsOn('zulu').find((c) => c.type === 'Conflict')?.status).toBe('True');
    }, 10_000);
    expect(conditionsOn('alpha').every((c) => typeof c.lastTransitionTime === 'string')).toBe(true);
    // alpha's Service agrees with zulu's again: its Conflict condition turns False.
    const alpha = servers.get('alpha') as KubeApiServer;
    alpha.delete('services', 'shop', 'web');
    alpha.create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
    });
    await eventually(async () => {
      expect(conditionsOn('alpha').find((c) => c.type === 'Conflict')).toMatchObject({
        status: 'False',
        reason: 'NoConflicts',
      });
      expect(conditionsOn('zulu').find((c) => c.type === 'Conflict')?.status).toBe('False');
    }, 10_000);
  });

  async function counter(name: string, labels: string): Promise<number> {
    const metrics = (await gw.adminGet('/metrics')).body;
    const line = metrics.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
    return Number(line?.split(' ')[1] ?? 0);
  }

  it('a new EndpointSlice created on a member reaches the east-west listener without a translation', async () => {
    const translations = () => counter('clusterset_gateway_translations_total', 'result="ok"');
    const endpointUpdates = () => counter('clusterset_gateway_data_plane_updates_total', 'kind="endpoints"');
    // Earlier tests' changes (export status writes, alpha's Service) have settled once two reads agree.
    let before = await translations();
    await eventually(async () => {
      const now = await translations();
      const settled = now === before;
      before = now;
      expect(settled).toBe(true);
    }, 10_000);
    const endpointsBefore = await endpointUpdates();
    addSlice(servers.get('zulu') as KubeApiServer, 'web-2', address, pods.get('web-zulu-2') as EchoServer);
    await eventually(
      async () => expect(await podsAnswering()).toEqual(new Set(['web-zulu', 'web-zulu-2', 'web-alpha'])),
      10_000,
    ); // Only the import's endpoint set was replaced: no route was translated again.
    expect(await translations()).toBe(before);
    expect(await endpointUpdates()).toBeGreaterThan(endpointsBefore);
  });
});
