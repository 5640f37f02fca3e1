import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { AdminRoute } from '../admin/admin-server.ts';
import { demoManifests } from './manifests.ts';
import { type DemoServedView, waitForHealth, waitForMembers } from './served.ts';
import { makeDemoFolder, removeStaleDemoFolders } from './temp-folders.ts';
import { type DemoPod, GATEWAY_IDENTITY } from './topology.ts';
import type {
  GatewayMessage,
  MembersDescribed,
  PodsChanged,
  WorldMessage,
  WorldStarted,
} from './world-protocol.ts';

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

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
  /** What the gateway serves: `/demo/stop`, `/demo/start` and `/demo/sync` return once it serves their change. */
  readonly served: DemoServedView;
}

export interface Demo {
  /** A folder of plain Kubernetes YAML the file source watches; edit it and the gateway follows. */
  readonly manifestsDir: string;
  /** The demo's clusters as fleet members: the gateway's `--clusterprofile-provider-file`, a kubeconfig for kubectl. */
  readonly fleet: Pick<WorldStarted, 'providerFile' | 'kubeconfig' | 'kubeconfigFile'>;
  readonly identity: typeof GATEWAY_IDENTITY;
  /**
   * `/demo/stop` and `/demo/start` on the admin port: take pods down and up by zone, cluster or pod; `/demo/sync`
   * waits until the gateway serves what the member clusters hold (after a kubectl edit).
   */
  readonly adminRoutes: ReadonlyMap<string, AdminRoute>;
  readonly banner: string;
  /** The child process that runs the pods and the member API servers. */
  readonly worldPid: number;
  close(): Promise<void>;
}

// The world is compiled beside this module: dist/demo/world.js under `npm start`, src/demo/world.ts under tsx.
const WORLD_ENTRY = fileURLToPath(
  new URL(`./world${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url),
);
const WORLD_START_TIMEOUT_MS = 60_000;
const WORLD_STOP_TIMEOUT_MS = 5_000;
/** Two failed health checks at the default 2 s interval, with room for a loaded machine. */
const SERVED_TIMEOUT_MS = 15_000;

/**
 * Forks the demo's world (src/demo/world.ts: a backend for every simulated pod on 127.0.0.1 and the member API
 * servers) and writes the manifests that describe it. The gateway process stays only the gateway; if the world
 * dies, the gateway logs it and the demo's admin routes answer 503 saying so.
 */
export async function startDemo(options: DemoOptions): Promise<Demo> {
  const logger = options.logger.child({ component: 'demo' });
  const stale = removeStaleDemoFolders();
  if (stale.length > 0) logger.info({ folders: stale }, 'removed the folders of demos that were killed');
  // Node's own flags (tsx's loader under the tests) but none of the gateway's heap tuning.
  const child = fork(WORLD_ENTRY, [], {
    execArgv: process.execArgv.filter((flag) => !flag.startsWith('--max-semi-space-size')),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'json',
  });
  const pid = child.pid ?? 0;
  let world: WorldStarted;
  try {
    world = await worldStarted(child);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const manifestsDir = makeDemoFolder('hub');
  writeFileSync(
    join(manifestsDir, 'demo.yaml'),
    demoManifests(world.pods, options.controllerName, options.gatewayPort, world.clusterProfiles, {
      cert: readFileSync(world.networkIdentity.certFile, 'utf8'),
      key: readFileSync(world.networkIdentity.keyFile, 'utf8'),
      ca: readFileSync(world.networkIdentity.trustBundleFile, 'utf8'),
    }),
  );
  logger.info(
    { manifestsDir, pods: world.pods.length, members: world.members.map((m) => m.url), worldPid: pid },
    'demo backends and member clusters started',
  );

  let exit: string | undefined;
  let closing = false;
  const pending = new Map<number, (answer: PodsChanged | MembersDescribed) => void>();
  const goneAnswer = (): PodsChanged => ({
    type: 'changed',
    id: 0,
    status: 503,
    message: `the demo's pods and member clusters (process ${pid}) ${exit ?? 'exited'}: restart the demo (npm start) to get them back`,
  });
  child.on('exit', (code, signal) => {
    exit = signal ? `were killed by ${signal}` : `exited with code ${code}`;
    if (!closing)
      logger.error(
        { worldPid: pid, code, signal },
        "the demo's pods and member clusters stopped; the gateway goes on without them",
      );
    for (const answer of pending.values()) answer(goneAnswer());
    pending.clear();
  });
  // A channel that breaks is reported through 'exit' and the send callbacks; unhandled, it would end the gateway.
  child.on('error', (error) => logger.warn({ worldPid: pid, err: error }, "the demo's world channel failed"));
  child.on('message', (message: WorldMessage) => {
    if (message.type !== 'changed' && message.type !== 'members') return;
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  let nextId = 1;
  const ask = (question: DistributiveOmit<GatewayMessage, 'id'>): Promise<PodsChanged | MembersDescribed> =>
    new Promise((resolve) => {
      if (exit !== undefined || !child.connected) {
        resolve(goneAnswer());
        return;
      }
      const id = nextId++;
      pending.set(id, resolve);
      const message = { ...question, id } as GatewayMessage;
      child.send(message, (error) => {
        if (!error) return;
        pending.delete(id);
        resolve(goneAnswer());
      });
    });

  const setRunning =
    (up: boolean): AdminRoute =>
    async (req, res, url) => {
      if (req.method !== 'POST') {
        sendText(res, 405, `${url.pathname} changes the demo: use POST\n`, { allow: 'POST' });
        return;
      }
      const changed = await ask({ type: 'set-running', up, query: url.search });
      if (changed.type !== 'changed') return;
      if (!changed.pods) {
        sendText(res, changed.status, `${changed.message}\n`);
        return;
      }
      logger.info({ pods: changed.pods }, up ? 'demo pods started' : 'demo pods stopped');
      // Returns once the health model has seen it: the next request goes where the change sends it.
      const keys = new Set(
        world.pods.filter((pod) => changed.pods?.includes(pod.pod)).map((pod) => `127.0.0.1:${pod.port}`),
      );
      const seen = await waitForHealth(options.served, keys, up, SERVED_TIMEOUT_MS);
      const late = `the gateway's health checks have not seen it within ${SERVED_TIMEOUT_MS / 1000}s`;
      sendText(res, changed.status, `${changed.message}\n${seen ? '' : `${late}\n`}`);
    };

  const sync: AdminRoute = async (_req, res) => {
    const described = await ask({ type: 'describe-members' });
    if (described.type !== 'members') {
      sendText(res, described.status, `${described.message}\n`);
      return;
    }
    const behind = await waitForMembers(options.served, described.members, SERVED_TIMEOUT_MS);
    if (behind.length > 0) {
      sendText(res, 504, `not in sync within ${SERVED_TIMEOUT_MS / 1000}s: ${behind.join(' ')}\n`);
      return;
    }
    sendText(res, 200, `in sync with ${described.members.map((m) => m.cluster).join(' ')}\n`);
  };

  const web = `http://127.0.0.1:${options.servedPort}`;
  // `npm run demo:grpc` calls 127.0.0.1:8080 unless told otherwise.
  const grpcHello = (flags: string): string => {
    const all = `${options.servedPort === 8080 ? '' : `--url ${web} `}${flags}`.trim();
    // Padded to the column of the curl lines' comments.
    return `npm run demo:grpc${all ? ` -- ${all}` : ''}`.padEnd(72);
  };
  const count = (protocol: DemoPod['protocol']) =>
    world.pods.filter((pod) => pod.protocol === protocol).length;
  const admin = `http://127.0.0.1:${options.adminPort}`;
  const banner = [
    '',
    `clusterset-gateway demo: gateway in cluster ${GATEWAY_IDENTITY.cluster}, zone ${GATEWAY_IDENTITY.zone}, region ${GATEWAY_IDENTITY.region}`,
    `  ${count('http')} echo pods and ${count('grpc')} gRPC pods in clusters east-1, east-2 (region us-east) and west-1 (region us-west)`,
    `  member clusters: ${world.members.map((m) => `${m.cluster} ${m.url}`).join(', ')} (fleet mode: ClusterProfiles and an exec plugin)`,
    `  pods and member clusters run in process ${pid}, the gateway in ${process.pid}`,
    ...world.networkGateways.map(
      (g) =>
        `  ${g.cluster} is on network ${g.network}: its pods are reached through its network gateway ${g.address} (mutual TLS, HTTP/2 CONNECT; process ${g.pid}, admin ${g.adminUrl})`,
    ),
    `  hub manifests: ${manifestsDir}  (edit them; the gateway follows)`,
    `  kubeconfig for the members: ${world.kubeconfigFile}  (also at ${`http://127.0.0.1:${options.adminPort}`}/demo/kubeconfig)`,
    '',
    'Try:',
    `  curl -s ${web}/ | grep -E '"(pod|cluster|zone)"'          # ServiceImport web, PreferSameZone: zone us-east-1a`,
    `  curl -s ${web}/api | grep -E '"(pod|cluster)"'            # 90% local Service api, 10% ServiceImport api`,
    `  curl -s '${web}/?[1-300]' | grep -o '"zone": "[^"]*"' | sort | uniq -c   # where 300 requests go`,
    `  curl -s -X POST '${admin}/demo/stop?pod=web-us-east-1a-3'  # 1 of 3 near pods: ~93% stays near, ~7% to us-east-1b`,
    `  curl -s -X POST '${admin}/demo/start?pod=web-us-east-1a-3' # back to 100% near (stop and start return once the health checks see it)`,
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
    `  kubectl --kubeconfig ${world.kubeconfigFile} --context west-1 get serviceexports,endpointslices -A`,
    `  curl -s ${admin}/demo/sync         # after a kubectl edit in a member: returns once the gateway serves it`,
    `  curl -s ${admin}/config_dump       # routing table, endpoint tiers and health, statuses`,
    ...world.networkGateways.map(
      (g) =>
        `  curl -s ${admin}/config_dump | grep -A14 '"name": "${g.network}"'   # ${g.cluster}'s network and its gateway`,
    ),
    `  curl -s ${admin}/metrics | grep clusterset_gateway_upstream`,
    '',
  ].join('\n');

  return {
    manifestsDir,
    fleet: world,
    identity: GATEWAY_IDENTITY,
    adminRoutes: new Map([
      ['/demo/stop', setRunning(false)],
      ['/demo/start', setRunning(true)],
      ['/demo/sync', sync],
      [
        '/demo/kubeconfig',
        (_req, res) => sendText(res, 200, world.kubeconfig, { 'content-type': 'application/yaml' }),
      ],
    ]),
    banner,
    worldPid: pid,
    async close() {
      closing = true;
      if (exit === undefined) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        // Closing the channel is the world's signal to stop its servers and remove its folder.
        if (child.connected) child.disconnect();
        const timer = setTimeout(() => child.kill('SIGKILL'), WORLD_STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      rmSync(manifestsDir, { recursive: true, force: true });
      // Left behind if the world was killed.
      rmSync(world.workDir, { recursive: true, force: true });
    },
  };
}

/** Waits for the world's servers to listen; a world that fails or exits first is a start-up failure. */
function worldStarted(child: ChildProcess): Promise<WorldStarted> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        fail(
          new Error(
            `the demo's pods and member clusters did not start within ${WORLD_START_TIMEOUT_MS / 1000}s`,
          ),
        ),
      WORLD_START_TIMEOUT_MS,
    );
    const onMessage = (message: WorldMessage): void => {
      if (message.type === 'started') done(() => resolve(message));
      if (message.type === 'failed') fail(new Error(message.message));
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void =>
      fail(
        new Error(`the demo's pods and member clusters exited before starting (${signal ?? `code ${code}`})`),
      );
    const done = (settle: () => void): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      child.off('error', fail);
      settle();
    };
    const fail = (error: Error): void => done(() => reject(error));
    child.on('message', onMessage);
    child.on('exit', onExit);
    child.on('error', fail);
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
