/**
 * The cost of the extra hop through another network's gateway (issue 41): one echo pod, reached by gateway east
 * either directly (cluster south, same network: `direct.example`) or through gateway west's network gateway
 * (cluster west on net-west: `tunnel.example`, HTTP/1.1 inside CONNECT streams on one mTLS HTTP/2 session).
 * autocannon in this process, both gateways as child processes, cases taking turns (--rounds of --seconds each).
 * Reported, never asserted; on a shared machine read the ratio, not the absolute numbers.
 *
 *   timeout 300 node --import tsx bench/network-hop.ts [--seconds 10] [--rounds 2] [--connections 50]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startEchoServer } from '../src/demo/echo/echo-server.ts';
import { freePort, startGateway } from '../test/support/gateway-process.ts';
import {
  gateway,
  gatewayClass,
  httpRoute,
  importedSlice,
  serviceImport,
  yamlDocs,
} from '../test/support/manifests.ts';
import { identityFiles, makeTrustDomain, networkTlsArgs } from '../test/support/network-certs.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
  },
});
const NS = 'bench';
const dir = mkdtempSync(join(tmpdir(), 'csgw-hop-'));
makeTrustDomain(dir, 'bench.local', ['east', 'west']);
const pod = await startEchoServer({
  host: '127.0.0.1',
  port: 0,
  identity: { namespace: NS, service: 'web', pod: 'web-0', cluster: 'west', zone: 'a' },
});
const [httpPort, eastNet, westNet] = [await freePort(), await freePort(), await freePort()];
const slice = (name: string, service: string, cluster: string) =>
  importedSlice(name, service, NS, cluster, { port: pod.port, pod: 'web-0' });
const profile = (cluster: string, network: string, gatewayPort: number) => ({
  apiVersion: 'multicluster.x-k8s.io/v1alpha1',
  kind: 'ClusterProfile',
  metadata: { name: cluster, namespace: 'fleet' },
  spec: { displayName: cluster, clusterManager: { name: 'bench' } },
  status: {
    properties: [
      { name: 'network.clusterset-gateway.io', value: network },
      { name: 'network-gateways.clusterset-gateway.io', value: `127.0.0.1:${gatewayPort}` },
    ],
  },
});
const routeTo = (name: string, host: string) =>
  httpRoute(name, NS, {
    parentRefs: [{ name: 'edge' }],
    hostnames: [host],
    rules: [{ backendRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name, port: 80 }] }],
  });
const common = ['--no-health-checks', '--log-level', 'error'];
const east = await startGateway({
  args: [
    '--cluster',
    'east',
    '--network',
    'net-east',
    '--network-gateway-port',
    String(eastNet),
    ...networkTlsArgs(identityFiles(dir, 'east')),
    ...common,
  ],
  manifests: {
    'bench.yaml': yamlDocs(
      gatewayClass(),
      gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port: httpPort }]),
      serviceImport('direct', NS),
      serviceImport('tunnel', NS),
      routeTo('direct', 'direct.example'),
      routeTo('tunnel', 'tunnel.example'),
      slice('direct-south', 'direct', 'south'),
      slice('tunnel-west', 'tunnel', 'west'),
      profile('south', 'net-east', eastNet),
      profile('west', 'net-west', westNet),
    ),
  },
});
const west = await startGateway({
  args: [
    '--cluster',
    'west',
    '--network',
    'net-west',
    '--network-gateway-port',
    String(westNet),
    ...networkTlsArgs(identityFiles(dir, 'west')),
    ...common,
  ],
  manifests: { 'bench.yaml': yamlDocs(serviceImport('tunnel', NS), slice('tunnel-west', 'tunnel', 'west')) },
});

const run = async (host: string) => {
  const result = await autocannon({
    url: `http://127.0.0.1:${httpPort}/`,
    connections: Number(values.connections),
    duration: Number(values.seconds),
    headers: { host },
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
};
try {
  for (const host of ['direct.example', 'tunnel.example']) await run(host).catch(() => undefined); // warm-up
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const host of ['direct.example', 'tunnel.example']) {
      const r = await run(host);
      console.log(
        `round ${round} ${host.padEnd(15)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  errors ${r.errors}`,
      );
    }
  }
} finally {
  await east.stop();
  await west.stop();
  await pod.close();
  rmSync(dir, { recursive: true, force: true });
}
