import { type EchoIdentity, type EchoServer, startEchoServer } from '../../src/echo/echo-server.ts';

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
