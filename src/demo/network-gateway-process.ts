import { type ChildProcess, fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { MCS_SERVICE_NAME_LABEL, SOURCE_CLUSTER_LABEL } from '../snapshot/well-known-labels.ts';
import type { NetworkIdentityFiles } from './network-identities.ts';
import { waitForHealth } from './served.ts';
import {
  DEMO_NAMESPACE,
  GRPC_SERVICE,
  GRPC_SERVICE_PORT,
  podEndpointSlice,
  type RunningPod,
} from './topology.ts';

export interface NetworkGatewayProcess {
  readonly cluster: string;
  readonly network: string;
  /** Where other networks reach it: mutual TLS, HTTP/2 CONNECT. */
  readonly port: number;
  readonly adminUrl: string;
  readonly pid: number;
  /** Waits until that gateway's health checks give these pods (`127.0.0.1:<port>`) the verdict `healthy`. */
  waitForHealth(keys: ReadonlySet<string>, healthy: boolean, timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

// Beside this module: dist/main.js under `npm start`, src/main.ts under tsx.
const GATEWAY_ENTRY = fileURLToPath(
  new URL(`../main${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url),
);
const READY_TIMEOUT_MS = 45_000;
const STOP_TIMEOUT_MS = 5_000;

/**
 * A cluster's own clusterset-gateway in the demo's world, run only as that cluster's network gateway: another
 * process of the same program (`--network-gateway-port`, mutual TLS with its certificate from the demo's trust
 * domain) serving the cluster's exported services to other networks, from a manifests folder holding what the
 * cluster exports (ServiceImports and its own EndpointSlices, as an MCS controller would give it). It balances
 * over the cluster's pods with its own health checks. It stops with the world (its IPC channel closes).
 */
export async function startNetworkGatewayProcess(options: {
  readonly cluster: string;
  readonly network: string;
  readonly region: string;
  readonly zone: string;
  readonly pods: readonly RunningPod[];
  readonly identity: NetworkIdentityFiles;
  readonly dir: string;
}): Promise<NetworkGatewayProcess> {
  const manifests = join(options.dir, `${options.cluster}-gateway`);
  mkdirSync(manifests, { recursive: true });
  writeFileSync(join(manifests, 'exports.yaml'), exportedManifests(options.cluster, options.pods));
  const [port, adminPort] = [await freePort(), await freePort()];
  const child = fork(
    GATEWAY_ENTRY,
    [
      '--manifests',
      manifests,
      '--cluster',
      options.cluster,
      '--region',
      options.region,
      '--zone',
      options.zone,
      '--network',
      options.network,
      '--address',
      '127.0.0.1',
      '--admin-address',
      '127.0.0.1',
      '--admin-port',
      String(adminPort),
      '--network-gateway-port',
      String(port),
      '--network-tls-cert',
      options.identity.certFile,
      '--network-tls-key',
      options.identity.keyFile,
      '--network-trust-bundle',
      options.identity.trustBundleFile,
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' },
  );
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  try {
    await ready(child, adminUrl);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    cluster: options.cluster,
    network: options.network,
    port,
    adminUrl,
    pid: child.pid ?? 0,
    waitForHealth: (keys, healthy, timeoutMs) =>
      waitForHealth({ balancers: () => balancersOf(adminUrl) }, keys, healthy, timeoutMs),
    close: () => stop(child),
  };
}

/** What the cluster exports, as its gateway reads it: one ServiceImport per service, its own pods' slices. */
function exportedManifests(cluster: string, pods: readonly RunningPod[]): string {
  const here = pods.filter((pod) => pod.cluster === cluster);
  const objects: unknown[] = [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: DEMO_NAMESPACE } }];
  for (const service of new Set(here.map((pod) => pod.service))) {
    const grpc = service === GRPC_SERVICE;
    const port = grpc
      ? { name: 'grpc', protocol: 'TCP', port: GRPC_SERVICE_PORT, appProtocol: 'kubernetes.io/h2c' }
      : { name: 'http', protocol: 'TCP', port: 80 };
    objects.push({
      apiVersion: 'multicluster.x-k8s.io/v1alpha1',
      kind: 'ServiceImport',
      metadata: { name: service, namespace: DEMO_NAMESPACE },
      spec: { type: 'ClusterSetIP', ports: [port] },
    });
    for (const pod of here.filter((p) => p.service === service)) {
      objects.push(
        podEndpointSlice(pod, { [MCS_SERVICE_NAME_LABEL]: service, [SOURCE_CLUSTER_LABEL]: cluster }, port),
      );
    }
  }
  return objects.map((object) => stringify(object)).join('---\n');
}

/** The balancers in that gateway's /config_dump (none while it does not answer). */
async function balancersOf(
  adminUrl: string,
): Promise<Record<string, { endpoints: { key: string; healthy: boolean }[] }>> {
  try {
    const response = await fetch(`${adminUrl}/config_dump`);
    const dump = (await response.json()) as {
      balancers?: Record<string, { endpoints: { key: string; healthy: boolean }[] }> | null;
    };
    return dump.balancers ?? {};
  } catch {
    return {};
  }
}

async function ready(child: ChildProcess, adminUrl: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(
        `the demo's network gateway exited before it was ready (${child.exitCode ?? child.signalCode})`,
      );
    const up = await fetch(`${adminUrl}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (up) return;
    if (Date.now() > deadline)
      throw new Error(`the demo's network gateway was not ready within ${READY_TIMEOUT_MS / 1000}s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
