import { type EchoIdentity, type EchoServer, startEchoServer } from '../../src/demo/echo/echo-server.ts';

export interface RunningEcho extends EchoServer {
  readonly identity: EchoIdentity;
}

/** Starts echo backends on 127.0.0.1:0, one per pod name, all in the given cluster and zone unless overridden. */
export async function startEchoes(
  pods: readonly (string | (Partial<EchoIdentity> & { pod: string }))[],
  defaults: Partial<EchoIdentity> = {},
): Promise<RunningEcho[]> {
  return Promise.all(
    pods.map(async (p) => {
      const given = typeof p === 'string' ? { pod: p } : p;
      const identity: EchoIdentity = {
        namespace: 'default',
        service: 'echo',
        cluster: 'cluster-a',
        zone: 'zone-a',
        ...defaults,
        ...given,
      };
      const server = await startEchoServer({ host: '127.0.0.1', port: 0, identity });
      return { ...server, identity, close: server.close };
    }),
  );
}

export async function closeAll(servers: readonly { close(): Promise<void> }[]): Promise<void> {
  await Promise.all(servers.map((s) => s.close()));
}

/**
 * An echo backend that stops and starts again on the same port, as a restarted pod keeps its address (the
 * EndpointSlices naming it stay valid). `port` is 0 until the first start picks one.
 */
export interface RestartablePod {
  port: number;
  server?: EchoServer | undefined;
}

export async function startPod(pod: RestartablePod, identity: EchoIdentity): Promise<void> {
  pod.server = await startEchoServer({ host: '127.0.0.1', port: pod.port, identity });
  pod.port = pod.server.port;
}

export async function stopPod(pod: RestartablePod): Promise<void> {
  await pod.server?.close();
  pod.server = undefined;
}
