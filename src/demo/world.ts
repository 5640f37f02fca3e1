// The demo's world: the 17 pods (echo and Greeter servers) and the three simulated member API servers, in a child
// process the gateway forks (src/demo/demo.ts), as real clusters are other processes: the gateway's own memory
// and CPU are then the gateway's alone (issue 31). It lives as long as the IPC channel to the gateway: when the
// gateway exits, however it exits, the channel closes and so does the world.
import { rmSync } from 'node:fs';
import { startEchoServer } from './echo/echo-server.ts';
import { startGreeterServer } from './greeter/greeter-server.ts';
import { type DemoFleet, startDemoFleet } from './members.ts';
import { type NetworkGatewayProcess, startNetworkGatewayProcess } from './network-gateway-process.ts';
import { makeDemoTrustDomain } from './network-identities.ts';
import { selectPods } from './pod-selection.ts';
import { makeDemoFolder } from './temp-folders.ts';
import {
  DEMO_NAMESPACE,
  DEMO_PODS,
  type DemoPod,
  GATEWAY_IDENTITY,
  OTHER_NETWORK,
  type RunningPod,
} from './topology.ts';
import type { GatewayMessage, PodsChanged, WorldMessage } from './world-protocol.ts';

interface PodProcess {
  readonly pod: DemoPod;
  port: number;
  server: { close(): Promise<void> } | undefined;
}

/** Two failed health checks at the default 2 s interval, with room for a loaded machine. */
const OTHER_NETWORK_HEALTH_TIMEOUT_MS = 15_000;

const send = (message: WorldMessage): void => {
  process.send?.(message);
};

async function main(): Promise<void> {
  if (!process.send) {
    process.stderr.write('src/demo/world: the demo world runs as a child of the gateway (npm start)\n');
    process.exit(2);
  }
  const pods: PodProcess[] = [];
  const workDir = makeDemoFolder('fleet');
  let fleet: DemoFleet | undefined;
  let networkGateway: NetworkGatewayProcess | undefined;
  let stopping = false;
  const stop = async (code: number): Promise<never> => {
    if (!stopping) {
      stopping = true;
      await Promise.all(pods.map((entry) => entry.server?.close()));
      await fleet?.close();
      await networkGateway?.close();
      rmSync(workDir, { recursive: true, force: true });
    }
    process.exit(code);
  };
  process.on('disconnect', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  // Ctrl-C reaches the whole foreground group: the gateway drains, then closes the channel, and the world follows.
  process.on('SIGINT', () => {});

  try {
    for (const pod of DEMO_PODS) {
      const server = await startPod(pod, 0);
      pods.push({ pod, port: server.port, server });
    }
    const running: RunningPod[] = pods.map(({ pod, port }) => ({ ...pod, port }));
    const identities = makeDemoTrustDomain(workDir, [GATEWAY_IDENTITY.cluster, OTHER_NETWORK.cluster]);
    networkGateway = await startNetworkGatewayProcess({
      ...OTHER_NETWORK,
      pods: running,
      identity: identities.get(OTHER_NETWORK.cluster)!,
      dir: workDir,
    });
    fleet = await startDemoFleet(running, workDir, [
      { cluster: networkGateway.cluster, network: networkGateway.network, port: networkGateway.port },
    ]);
    send({
      type: 'started',
      pods: running,
      members: fleet.members.map(({ cluster, server }) => ({ cluster, url: server.url })),
      clusterProfiles: fleet.clusterProfiles,
      providerFile: fleet.providerFile,
      kubeconfig: fleet.kubeconfig,
      kubeconfigFile: fleet.kubeconfigFile,
      networkIdentity: identities.get(GATEWAY_IDENTITY.cluster)!,
      networkGateways: [
        {
          cluster: networkGateway.cluster,
          network: networkGateway.network,
          address: `127.0.0.1:${networkGateway.port}`,
          adminUrl: networkGateway.adminUrl,
          pid: networkGateway.pid,
        },
      ],
      workDir,
    });
  } catch (error) {
    send({ type: 'failed', message: (error as Error).message });
    await stop(1);
  }

  // One change at a time, in the order asked: a stop and a start of the same pod never interleave.
  let queue = Promise.resolve();
  process.on('message', (message: GatewayMessage) => {
    if (message.type === 'describe-members') {
      // Behind the pod changes asked before it, as the gateway asked.
      queue = queue.then(() => send({ type: 'members', id: message.id, members: fleet?.contents() ?? [] }));
      return;
    }
    if (message.type !== 'set-running') return;
    queue = queue.then(async () => {
      const changed = await setRunning(pods, message.id, message.up, message.query);
      // The other network's pods are balanced by its own gateway: answered once that one has seen the change.
      const keys = new Set(
        pods
          .filter((p) => p.pod.cluster === OTHER_NETWORK.cluster && changed.pods?.includes(p.pod.pod))
          .map((p) => `127.0.0.1:${p.port}`),
      );
      if (keys.size > 0 && networkGateway !== undefined)
        await networkGateway.waitForHealth(keys, message.up, OTHER_NETWORK_HEALTH_TIMEOUT_MS);
      send(changed);
    });
  });
}

async function setRunning(pods: PodProcess[], id: number, up: boolean, query: string): Promise<PodsChanged> {
  const selection = selectPods(
    pods.map(({ pod }) => pod),
    new URLSearchParams(query),
  );
  if (selection.kind === 'error')
    return { type: 'changed', id, status: selection.status, message: selection.message };
  const selected = pods.filter(({ pod }) => selection.pods.includes(pod));
  try {
    for (const entry of selected) {
      if (up && !entry.server) entry.server = await startPod(entry.pod, entry.port);
      if (!up && entry.server) {
        await entry.server.close();
        entry.server = undefined;
      }
    }
  } catch (error) {
    // A pod's port taken by another program meanwhile: say so, the rest of the demo goes on.
    return {
      type: 'changed',
      id,
      status: 500,
      message: `could not change every pod: ${(error as Error).message}`,
    };
  }
  const names = selected.map(({ pod }) => pod.pod);
  return {
    type: 'changed',
    id,
    status: 200,
    message: `${up ? 'started' : 'stopped'}: ${names.join(' ')}`,
    pods: names,
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

void main();
