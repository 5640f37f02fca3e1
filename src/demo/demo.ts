import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { AdminRoute } from '../admin/admin-server.ts';
import { startEchoServer } from '../echo/echo-server.ts';
import { startGreeterServer } from '../greeter/greeter-server.ts';
import { demoManifests } from './manifests.ts';
import { type DemoFleet, startDemoFleet } from './members.ts';
import { selectPods } from './pod-selection.ts';
import { DEMO_NAMESPACE, DEMO_PODS, type DemoPod, GATEWAY_IDENTITY, type RunningPod } from './topology.ts';

export interface DemoOptions {
  readonly logger: Logger;
  readonly controllerName: string;
  /** The Gateway listener port written into the demo manifests (before any offset). */
  readonly gatewayPort: number;
  /** Where the proxy actually listens (gatewayPort + offset) and the admin port, for the printed curl lines. */
  readonly servedPort: number;
  readonly adminPort: number;
  /** The east-west listener's port, when it is on: the banner shows calls to `*.svc.clusterset.local`. */
  readonly eastWestPort?: number;
}

export interface Demo {
  /** A folder of plain Kubernetes YAML the file source watches; edit it and the gateway follows. */
  readonly manifestsDir: string;
  /** The demo's clusters as fleet members: the gateway's `--clusterprofile-provider-file`, a kubeconfig for kubectl. */
  readonly fleet: Pick<DemoFleet, 'providerFile' | 'kubeconfig' | 'kubeconfigFile'>;
  readonly identity: typeof GATEWAY_IDENTITY;
  /** `/demo/stop` and `/demo/start` on the admin port: take pods down and up by zone, cluster or pod. */
  readonly adminRoutes: ReadonlyMap<string, AdminRoute>;
  readonly banner: string;
  close(): Promise<void>;
}

interface PodProcess {
  readonly pod: DemoPod;
  port: number;
  server: { close(): Promise<void> } | undefined;
}

/** Starts a backend for every simulated pod on 127.0.0.1 and writes the manifests that describe them. */
export async function startDemo(options: DemoOptions): Promise<Demo> {
  const logger = options.logger.child({ component: 'demo' });
  const pods: PodProcess[] = [];
  for (const pod of DEMO_PODS) {
    const server = await startPod(pod, 0);
    pods.push({ pod, port: server.port, server });
  }
  const running: RunningPod[] = pods.map(({ pod, port }) => ({ ...pod, port }));
  const manifestsDir = mkdtempSync(join(tmpdir(), 'clusterset-gateway-demo-'));
  const workDir = mkdtempSync(join(tmpdir(), 'clusterset-gateway-demo-fleet-'));
  let fleet: DemoFleet;
  try {
    fleet = await startDemoFleet(running, workDir);
  } catch (error) {
    await Promise.all(pods.map((entry) => entry.server?.close()));
    rmSync(manifestsDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
    throw error;
  }
  writeFileSync(
    join(manifestsDir, 'demo.yaml'),
    demoManifests(running, options.controllerName, options.gatewayPort, fleet.clusterProfiles),
  );
  logger.info(
    { manifestsDir, pods: running.length, members: fleet.members.map((m) => m.server.url) },
    'demo backends and member clusters started',
  );

  const setRunning =
    (up: boolean): AdminRoute =>
    async (req, res, url) => {
      if (req.method !== 'POST') {
        sendText(res, 405, `${url.pathname} changes the demo: use POST\n`, { allow: 'POST' });
        return;
      }
      const selection = selectPods(
        pods.map(({ pod }) => pod),
        url.searchParams,
      );
      if (selection.kind === 'error') {
        sendText(res, selection.status, `${selection.message}\n`);
        return;
      }
      const selected = pods.filter(({ pod }) => selection.pods.includes(pod));
      for (const entry of selected) {
        if (up && !entry.server) entry.server = await startPod(entry.pod, entry.port);
        if (!up && entry.server) {
          await entry.server.close();
          entry.server = undefined;
        }
      }
      const names = selected.map(({ pod }) => pod.pod);
      logger.info({ pods: names }, up ? 'demo pods started' : 'demo pods stopped');
      sendText(res, 200, `${up ? 'started' : 'stopped'}: ${names.join(' ')}\n`);
    };

  const web = `http://127.0.0.1:${options.servedPort}`;
  // `npm run demo:grpc` calls 127.0.0.1:8080 unless told otherwise.
  const grpcHello = (flags: string): string => {
    const all = `${options.servedPort === 8080 ? '' : `--url ${web} `}${flags}`.trim();
    // Padded to the column of the curl lines' comments.
    return `npm run demo:grpc${all ? ` -- ${all}` : ''}`.padEnd(72);
  };
  const count = (protocol: DemoPod['protocol']) => running.filter((pod) => pod.protocol === protocol).length;
  const admin = `http://127.0.0.1:${options.adminPort}`;
  const banner = [
    '',
    `clusterset-gateway demo: gateway in cluster ${GATEWAY_IDENTITY.cluster}, zone ${GATEWAY_IDENTITY.zone}, region ${GATEWAY_IDENTITY.region}`,
    `  ${count('http')} echo pods and ${count('grpc')} gRPC pods in clusters east-1, east-2 (region us-east) and west-1 (region us-west)`,
    `  member clusters: ${fleet.members.map((m) => `${m.cluster} ${m.server.url}`).join(', ')} (fleet mode: ClusterProfiles and an exec plugin)`,
    `  hub manifests: ${manifestsDir}  (edit them; the gateway follows)`,
    `  kubeconfig for the members: ${fleet.kubeconfigFile}  (also at ${`http://127.0.0.1:${options.adminPort}`}/demo/kubeconfig)`,
    '',
    'Try:',
    `  curl -s ${web}/ | grep -E '"(pod|cluster|zone)"'          # ServiceImport web, PreferSameZone: zone us-east-1a`,
    `  curl -s ${web}/api | grep -E '"(pod|cluster)"'            # 90% local Service api, 10% ServiceImport api`,
    `  for i in $(seq 300); do curl -s ${web}/ | grep -o '"zone": "[^"]*"'; done | sort | uniq -c   # where traffic goes`,
    `  curl -s -X POST '${admin}/demo/stop?pod=web-us-east-1a-3'  # 1 of 3 near pods: ~93% stays near, ~7% to us-east-1b`,
    `  curl -s -X POST '${admin}/demo/start?pod=web-us-east-1a-3' # back to 100% near within seconds (health checks)`,
    `  curl -s -X POST '${admin}/demo/stop?zone=us-east-1a'       # a zone outage: traffic moves to us-east-1b`,
    `  curl -s -X POST '${admin}/demo/stop?cluster=east-1'        # the local cluster: to east-2, same region`,
    `  curl -s -X POST '${admin}/demo/stop?cluster=east-2'        # the region: to west-1`,
    `  curl -s -o /dev/null -w '%{http_code}\\n' ${web}/payments  # 503: its ClusterSelectionPolicy keeps it in us-east`,
    `  curl -s -X POST '${admin}/demo/start?cluster=east-2'       # start names what comes back: east-2 serves again`,
    `  curl -s -X POST '${admin}/demo/start?cluster=east-1'       # and east-1, zone us-east-1a included`,
    `  ${grpcHello('')} # gRPC demo.Greeter/Hello (GRPCRoute, h2c): zone us-east-1a`,
    `  ${grpcHello('--stream')} # server streaming: three replies on one call`,
    `  curl -s -X POST '${admin}/demo/stop?service=greeter&zone=us-east-1a'  # gRPC calls move to us-east-1b`,
    `  curl -s -X POST '${admin}/demo/start?service=greeter&zone=us-east-1a' # and back`,
    ...(options.eastWestPort === undefined
      ? []
      : [
          `  curl -s -H 'Host: web.demo.svc.clusterset.local' 127.0.0.1:${options.eastWestPort}/   # east-west, by Host`,
          `  curl -s -x http://127.0.0.1:${options.eastWestPort} http://web.demo.svc.clusterset.local/   # east-west, HTTP_PROXY style`,
        ]),
    `  kubectl --kubeconfig ${fleet.kubeconfigFile} --context west-1 get serviceexports,endpointslices -A`,
    `  curl -s ${admin}/config_dump       # routing table, endpoint tiers and health, statuses`,
    `  curl -s ${admin}/metrics | grep clusterset_gateway_upstream`,
    '',
  ].join('\n');

  return {
    manifestsDir,
    fleet,
    identity: GATEWAY_IDENTITY,
    adminRoutes: new Map([
      ['/demo/stop', setRunning(false)],
      ['/demo/start', setRunning(true)],
      [
        '/demo/kubeconfig',
        (_req, res) => sendText(res, 200, fleet.kubeconfig, { 'content-type': 'application/yaml' }),
      ],
    ]),
    banner,
    async close() {
      await Promise.all(pods.map((entry) => entry.server?.close()));
      await fleet.close();
      rmSync(manifestsDir, { recursive: true, force: true });
      rmSync(workDir, { recursive: true, force: true });
    },
  };
}

function startPod(pod: DemoPod, port: number): Promise<{ port: number; close(): Promise<void> }> {
  if (pod.protocol === 'grpc')
    return startGreeterServer({
      host: '127.0.0.1',
      port,
      identity: { pod: pod.pod, cluster: pod.cluster, zone: pod.zone },
    });
  return startEchoServer({
    host: '127.0.0.1',
    port,
    identity: {
      namespace: DEMO_NAMESPACE,
      service: pod.service,
      pod: pod.pod,
      cluster: pod.cluster,
      zone: pod.zone,
      node: pod.node,
    },
  });
}

function sendText(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(body);
}
