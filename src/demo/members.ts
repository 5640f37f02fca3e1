import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { selfSignedCertificate } from '../net/self-signed-certificate.ts';
import { REGION_LABEL, SERVICE_NAME_LABEL } from '../snapshot/well-known-labels.ts';
import { type KubeApiServer, startKubeApiServer } from './kube-sim/index.ts';
import {
  DEMO_FLEET_NAMESPACE,
  DEMO_NAMESPACE,
  GATEWAY_IDENTITY,
  GRPC_SERVICE,
  GRPC_SERVICE_PORT,
  podEndpointSlice,
  type RunningPod,
  TRAFFIC_DISTRIBUTION,
} from './topology.ts';
import type { MemberContents } from './world-protocol.ts';

/** The access provider the demo's ClusterProfiles name, and the provider file names too. */
export const DEMO_ACCESS_PROVIDER = 'clusterset-gateway-demo';
const NETWORK_GATEWAY_NAMESPACE = 'clusterset-gateway';
/** The label naming a member Service's network as a network gateway (docs/multi-network.md). */
const NETWORK_LABEL = 'network.clusterset-gateway.io';
// Long enough not to churn, short enough that a demo left running shows a renewal.
const TOKEN_LIFETIME_MS = 10 * 60_000;

export interface DemoMember {
  readonly cluster: string;
  readonly region: string;
  readonly server: KubeApiServer;
}

export interface DemoFleet {
  readonly members: readonly DemoMember[];
  /** ClusterProfiles for the hub's manifests folder, one per member. */
  readonly clusterProfiles: readonly unknown[];
  /** `--clusterprofile-provider-file` for the gateway: the demo's exec credential plugin. */
  readonly providerFile: string;
  /** A kubeconfig with one context per member, authenticated by the same plugin, for kubectl. */
  readonly kubeconfig: string;
  readonly kubeconfigFile: string;
  /** What each member's API server holds now (edits by kubectl included). */
  contents(): MemberContents[];
  close(): Promise<void>;
}

/**
 * The demo's clusters as fleet members: one simulated API server per cluster (HTTPS, bearer tokens, the real
 * list/watch protocol) holding that cluster's exported Services, EndpointSlices and About API
 * ClusterProperties, reached through ClusterProfiles and an exec credential plugin as a real fleet would be.
 */
/** A member's network gateway as the member shows it: a Service labelled with its network (fleet.md). */
export interface MemberNetworkGateway {
  readonly cluster: string;
  readonly network: string;
  readonly port: number;
}

export async function startDemoFleet(
  pods: readonly RunningPod[],
  dir: string,
  networkGateways: readonly MemberNetworkGateway[] = [],
): Promise<DemoFleet> {
  const tls = memberCertificate(dir);
  const plugin = writeCredentialPlugin(dir);
  const tokens: Record<string, string> = {};
  const members: DemoMember[] = [];
  try {
    for (const [cluster, region] of clustersOf(pods)) {
      const token = `demo-${cluster}-${randomBytes(12).toString('hex')}`;
      const server = await startKubeApiServer({
        tls,
        acceptToken: (presented) => presented === token,
        allowLoopbackEndpoints: true,
        defaultNamespaces: true,
      });
      tokens[server.url] = token;
      seedMember(server, cluster, pods);
      for (const gateway of networkGateways.filter((g) => g.cluster === cluster))
        seedNetworkGateway(server, gateway);
      members.push({ cluster, region, server });
    }
  } catch (error) {
    await Promise.all(members.map(({ server }) => server.stop()));
    throw error;
  }
  writeFileSync(plugin.tokensFile, JSON.stringify(tokens), { mode: 0o600 });

  const exec = {
    apiVersion: 'client.authentication.k8s.io/v1',
    command: process.execPath,
    args: [plugin.script],
    provideClusterInfo: true,
    interactiveMode: 'Never',
  };
  const providerFile = join(dir, 'providers.json');
  writeFileSync(
    providerFile,
    JSON.stringify({ providers: [{ name: DEMO_ACCESS_PROVIDER, execConfig: exec }] }),
  );
  const caData = Buffer.from(tls.cert).toString('base64');
  const kubeconfig = stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: members.map(({ cluster, server }) => ({
      name: cluster,
      cluster: { server: server.url, 'certificate-authority-data': caData },
    })),
    users: [{ name: 'demo', user: { exec } }],
    contexts: members.map(({ cluster }) => ({
      name: cluster,
      context: { cluster, user: 'demo', namespace: DEMO_NAMESPACE },
    })),
    'current-context': GATEWAY_IDENTITY.cluster,
  });
  const kubeconfigFile = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigFile, kubeconfig, { mode: 0o600 });

  return {
    members,
    contents: () =>
      members.map(({ cluster, server }) => ({
        cluster,
        serviceExports: server
          .list('serviceexports')
          .map((o) => {
            const meta = o.metadata as { namespace?: string; name?: string };
            return `${meta.namespace}/${meta.name}`;
          })
          .sort(),
        services: server.list('services').length,
        endpointSlices: server.list('endpointslices').length,
      })),
    clusterProfiles: members.map(({ cluster, region, server }) => ({
      apiVersion: 'multicluster.x-k8s.io/v1alpha1',
      kind: 'ClusterProfile',
      metadata: { name: cluster, namespace: DEMO_FLEET_NAMESPACE },
      spec: { displayName: cluster, clusterManager: { name: DEMO_ACCESS_PROVIDER } },
      status: {
        accessProviders: [
          {
            name: DEMO_ACCESS_PROVIDER,
            cluster: { server: server.url, 'certificate-authority-data': caData },
          },
        ],
        properties: [{ name: REGION_LABEL, value: region }],
      },
    })),
    providerFile,
    kubeconfig,
    kubeconfigFile,
    close: async () => {
      await Promise.all(members.map(({ server }) => server.stop()));
    },
  };
}

function clustersOf(pods: readonly RunningPod[]): Map<string, string> {
  return new Map(pods.map((pod) => [pod.cluster, pod.region]));
}

/** What the cluster's own API server holds: each service with a pod there is a Service, exported. */
function seedMember(server: KubeApiServer, cluster: string, pods: readonly RunningPod[]): void {
  server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: DEMO_NAMESPACE } });
  for (const [name, value] of [
    ['cluster.clusterset.k8s.io', cluster],
    ['clusterset.k8s.io', GATEWAY_IDENTITY.clusterset],
  ] as const) {
    server.create({
      apiVersion: 'about.k8s.io/v1alpha1',
      kind: 'ClusterProperty',
      metadata: { name },
      spec: { value },
    });
  }
  const here = pods.filter((pod) => pod.cluster === cluster);
  for (const service of new Set(here.map((pod) => pod.service))) {
    const grpc = service === GRPC_SERVICE;
    const port = grpc
      ? { name: 'grpc', protocol: 'TCP', port: GRPC_SERVICE_PORT, appProtocol: 'kubernetes.io/h2c' }
      : { name: 'http', protocol: 'TCP', port: 80 };
    const trafficDistribution = TRAFFIC_DISTRIBUTION[service];
    server.create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: service, namespace: DEMO_NAMESPACE },
      spec: {
        selector: { app: service },
        ports: [{ ...port, targetPort: port.name }],
        ...(trafficDistribution ? { trafficDistribution } : {}),
      },
    });
    server.create({
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name: service, namespace: DEMO_NAMESPACE },
    });
    for (const pod of here.filter((p) => p.service === service)) {
      server.create(
        podEndpointSlice(
          pod,
          { [SERVICE_NAME_LABEL]: service },
          { name: port.name, protocol: 'TCP', ...appProtocolOf(port) },
        ),
      );
    }
  }
}

/**
 * The member's network gateway Service, as a cloud load balancer would leave it (`status.loadBalancer.ingress`),
 * labelled with the member's network: how the gateway finds another network's entry point, as Istio finds its
 * east-west gateways (docs/multi-network.md).
 */
function seedNetworkGateway(server: KubeApiServer, gateway: MemberNetworkGateway): void {
  server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NETWORK_GATEWAY_NAMESPACE } });
  server.create({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: 'network-gateway',
      namespace: NETWORK_GATEWAY_NAMESPACE,
      labels: { [NETWORK_LABEL]: gateway.network },
    },
    spec: {
      type: 'LoadBalancer',
      selector: { app: 'clusterset-gateway' },
      ports: [{ name: 'network-gateway', protocol: 'TCP', port: gateway.port }],
    },
  });
  // The load balancer's address is status, written after the Service exists (as a cloud controller does).
  server.patch(
    'services',
    NETWORK_GATEWAY_NAMESPACE,
    'network-gateway',
    { status: { loadBalancer: { ingress: [{ ip: '127.0.0.1' }] } } },
    'status',
  );
}

function appProtocolOf(port: { readonly appProtocol?: string }): { appProtocol?: string } {
  return port.appProtocol ? { appProtocol: port.appProtocol } : {};
}

/**
 * The members serve HTTPS because kubectl (client-go) sends bearer tokens only over TLS. One self-signed
 * certificate for 127.0.0.1 serves every member; the ClusterProfiles and the kubeconfig carry it as their CA.
 */
function memberCertificate(dir: string): { cert: string; key: string } {
  try {
    const { cert, key } = selfSignedCertificate({
      dir,
      name: 'members',
      commonName: 'clusterset-gateway demo members',
      subjectAltNames: ['IP:127.0.0.1', 'DNS:localhost'],
      days: 30,
    });
    return { cert, key };
  } catch (error) {
    throw new Error(
      `the demo's member clusters serve HTTPS with a certificate made by the openssl command, which failed (${
        (error as Error).message
      }); install openssl (Debian: apt-get install openssl)`,
    );
  }
}

/**
 * A client.authentication.k8s.io/v1 exec credential plugin, as a cloud's `gke-gcloud-auth-plugin` or
 * `kubelogin` would be: it reads which cluster it is asked about from KUBERNETES_EXEC_INFO and prints that
 * member's token with an expiry, so the gateway (and kubectl) run it again when the token runs out.
 */
function writeCredentialPlugin(dir: string): { script: string; tokensFile: string } {
  const script = join(dir, 'credential-plugin.mjs');
  const tokensFile = join(dir, 'tokens.json');
  writeFileSync(
    script,
    `import { readFileSync } from 'node:fs';
const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO ?? '{}');
const server = info.spec?.cluster?.server;
const token = JSON.parse(readFileSync(${JSON.stringify(tokensFile)}, 'utf8'))[server];
if (!token) {
  process.stderr.write('no demo member at ' + server + '\\n');
  process.exit(1);
}
process.stdout.write(JSON.stringify({
  apiVersion: info.apiVersion ?? 'client.authentication.k8s.io/v1',
  kind: 'ExecCredential',
  status: { token, expirationTimestamp: new Date(Date.now() + ${TOKEN_LIFETIME_MS}).toISOString().replace(/\\.\\d+Z$/, 'Z') },
}));
`,
    { mode: 0o700 },
  );
  return { script, tokensFile };
}
