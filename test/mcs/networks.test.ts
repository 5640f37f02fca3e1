import { describe, expect, it } from 'vitest';
import { resolveServiceImportBackend } from '../../src/mcs/backends.ts';
import { translateNetworkGateway } from '../../src/mcs/network-gateway-table.ts';
import { indexNetworks, parseNetworkGateways } from '../../src/mcs/networks.ts';
import { snapshotFromYaml } from './fixtures.ts';

/** Two clusters on the default network (east-1, the gateway's, and east-2) and west-1 on its own. */
const fleet = (west1Properties: string, extra = '') =>
  snapshotFromYaml(`
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ClusterProfile
metadata: { name: west-1, namespace: fleet }
status:
  properties:
${west1Properties}
---
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceImport
metadata: { name: web, namespace: demo }
spec: { type: ClusterSetIP, ports: [{ name: http, port: 80, protocol: TCP }] }
---
${[
  'east-1:10.1.0.1',
  'east-1:10.1.0.2',
  'east-2:10.2.0.1',
  'west-1:10.3.0.1',
  'west-1:10.3.0.2',
  'west-1:10.3.0.3',
]
  .map((entry, i) => {
    const [cluster, address] = entry.split(':');
    return `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-${i}
  namespace: demo
  labels: { multicluster.kubernetes.io/service-name: web, multicluster.kubernetes.io/source-cluster: ${cluster} }
addressType: IPv4
ports: [{ name: http, port: 8080 }]
endpoints: [{ addresses: ["${address}"], zone: z-${cluster} }]`;
  })
  .join('\n---\n')}
${extra}`);

const identity = { cluster: 'east-1' };

describe('networks as cluster properties', () => {
  it('a flat fleet is one network: endpoints are unchanged and carry no network', () => {
    const snapshot = fleet('  - { name: topology.kubernetes.io/region, value: us-west }');
    const index = indexNetworks(snapshot, identity);
    expect(index.inUse).toBe(false);
    expect(index.networkOf('west-1')).toBe('default');
    const resolved = resolveServiceImportBackend(snapshot, 'demo', 'web', 80, identity);
    if (!resolved.ok) throw new Error(resolved.message);
    const endpoints = resolved.backend.tiers.flat();
    expect(endpoints.map((e) => e.key)).toEqual([
      '10.1.0.1:8080',
      '10.1.0.2:8080',
      '10.2.0.1:8080',
      '10.3.0.1:8080',
      '10.3.0.2:8080',
      '10.3.0.3:8080',
    ]);
    expect(endpoints.some((e) => e.network !== undefined || e.tunnel !== undefined)).toBe(false);
  });

  it('a cluster on another network is one target per gateway, weighted by its ready endpoints', () => {
    const snapshot = fleet(`  - { name: network.clusterset-gateway.io, value: net-west }
  - { name: network-gateways.clusterset-gateway.io, value: "198.51.100.7:15008, gw.west.example:443" }
  - { name: topology.kubernetes.io/region, value: us-west }`);
    const resolved = resolveServiceImportBackend(snapshot, 'demo', 'web', 80, identity);
    if (!resolved.ok) throw new Error(resolved.message);
    const endpoints = resolved.backend.tiers.flat();
    const local = endpoints.filter((e) => e.tunnel === undefined);
    expect(local.map((e) => [e.key, e.network])).toEqual([
      ['10.1.0.1:8080', 'default'],
      ['10.1.0.2:8080', 'default'],
      ['10.2.0.1:8080', 'default'],
    ]);
    expect(endpoints.filter((e) => e.tunnel !== undefined)).toEqual([
      {
        key: 'west-1@198.51.100.7:15008',
        address: '198.51.100.7',
        port: 15008,
        cluster: 'west-1',
        region: 'us-west',
        ready: true,
        weight: 2,
        network: 'net-west',
        tunnel: { authority: 'web.demo.svc.clusterset.local:80' },
      },
      {
        key: 'west-1@gw.west.example:443',
        address: 'gw.west.example',
        port: 443,
        cluster: 'west-1',
        region: 'us-west',
        ready: true,
        weight: 2,
        network: 'net-west',
        tunnel: { authority: 'web.demo.svc.clusterset.local:80' },
      },
    ]);
  });

  it('the gateway on another network than most: --network puts its own cluster there', () => {
    const snapshot = fleet(`  - { name: network.clusterset-gateway.io, value: net-west }
  - { name: network-gateways.clusterset-gateway.io, value: "198.51.100.7" }`);
    const own = { cluster: 'west-1', properties: { 'network.clusterset-gateway.io': 'net-west' } };
    const resolved = resolveServiceImportBackend(snapshot, 'demo', 'web', 80, own);
    if (!resolved.ok) throw new Error(resolved.message);
    // east-1 and east-2 are on the default network and name no gateway: unreachable, and said so.
    expect(resolved.backend.tiers.flat().map((e) => e.key)).toEqual([
      '10.3.0.1:8080',
      '10.3.0.2:8080',
      '10.3.0.3:8080',
    ]);
    expect(resolved.warnings?.filter((w) => w.code === 'NoNetworkGateway').map((w) => w.message)).toEqual([
      'ServiceImport/demo/web:80: cluster east-1 is on network default and names no network gateway (property network-gateways.clusterset-gateway.io); its 2 endpoints are left out',
      'ServiceImport/demo/web:80: cluster east-2 is on network default and names no network gateway (property network-gateways.clusterset-gateway.io); its 1 endpoints are left out',
    ]);
  });

  it('profile labels name a network too (status.properties first)', () => {
    const snapshot = fleet(
      '  - { name: topology.kubernetes.io/region, value: us-west }',
      `---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ClusterProfile
metadata: { name: east-2, namespace: fleet, labels: { network.clusterset-gateway.io: net-b } }
status: {}`,
    );
    expect(indexNetworks(snapshot, identity).networkOf('east-2')).toBe('net-b');
  });

  it('gateway lists: host:port, bracketed IPv6, default port 15008; garbage is left out and named', () => {
    expect(
      parseNetworkGateways(' 10.0.0.1:15008,[fd00::1]:443 , gw.example ,, bad host:1, x:0, y:99999'),
    ).toEqual({
      addresses: [
        { address: '10.0.0.1', port: 15008 },
        { address: 'fd00::1', port: 443 },
        { address: 'gw.example', port: 15008 },
      ],
      invalid: ['bad host:1', 'x:0', 'y:99999'],
    });
    const snapshot = fleet(`  - { name: network.clusterset-gateway.io, value: net-west }
  - { name: network-gateways.clusterset-gateway.io, value: "http://x" }`);
    expect(indexNetworks(snapshot, identity).problems.map((p) => p.code)).toEqual(['InvalidNetworkGateways']);
  });

  it("the network gateway's table: every exported port, only this cluster's endpoints, never a tunnel", () => {
    const snapshot = fleet(`  - { name: network.clusterset-gateway.io, value: net-west }
  - { name: network-gateways.clusterset-gateway.io, value: "198.51.100.7" }`);
    const table = translateNetworkGateway(snapshot, identity);
    expect(table.config).toEqual({
      network: 'default',
      services: [
        { authority: 'web.demo.svc.clusterset.local:80', backendId: 'ServiceImport/demo/web:80#local' },
      ],
    });
    expect(table.backends.map((b) => b.tiers.flat().map((e) => e.key))).toEqual([
      ['10.1.0.1:8080', '10.1.0.2:8080'],
    ]);
    // A cluster that exports nothing serves nothing.
    expect(translateNetworkGateway(snapshot, { cluster: 'elsewhere' }).config.services).toEqual([]);
  });
});
