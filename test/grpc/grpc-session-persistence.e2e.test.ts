import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, service, serviceSlice, yamlDocs } from '../support/manifests.ts';

/**
 * Session persistence on a GRPCRoute rule (GEP-1619, type Header), with grpc-js on both ends: the first call
 * gets the session's value in its response metadata, calls that send it back reach the same pod and get no new
 * value, a forged value is a fresh pick (never an error), and a pod that goes away moves its sessions.
 */
const NS = 'rpc';
const SERVICE = 'test.Who';
const SESSION = 'x-rpc-session';
const toBuffer = (text: string): Buffer => Buffer.from(text, 'utf8');
const fromBuffer = (buffer: Buffer): string => buffer.toString('utf8');

interface Pod {
  readonly pod: string;
  port: number;
  server?: grpc.Server | undefined;
}

const PODS: Pod[] = [
  { pod: 'pod-a', port: 0 },
  { pod: 'pod-b', port: 0 },
];

async function up(pod: Pod): Promise<void> {
  const server = new grpc.Server();
  server.addService(
    {
      Name: {
        path: `/${SERVICE}/Name`,
        requestStream: false,
        responseStream: false,
        requestSerialize: toBuffer,
        requestDeserialize: fromBuffer,
        responseSerialize: toBuffer,
        responseDeserialize: fromBuffer,
      },
    },
    {
      Name: (_call: grpc.ServerUnaryCall<string, string>, callback: grpc.sendUnaryData<string>) =>
        callback(null, pod.pod),
    },
  );
  pod.port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${pod.port}`, grpc.ServerCredentials.createInsecure(), (err, port) =>
      err ? reject(err) : resolve(port),
    ),
  );
  pod.server = server;
}

interface Answer {
  readonly pod?: string;
  readonly error?: grpc.ServiceError;
  /** The session value in the response's metadata, when the gateway set one. */
  readonly session?: string;
}

function call(client: grpc.Client, session?: string): Promise<Answer> {
  const metadata = new grpc.Metadata();
  if (session !== undefined) metadata.set(SESSION, session);
  return new Promise((resolve) => {
    let issued: string | undefined;
    const unary = client.makeUnaryRequest(
      `/${SERVICE}/Name`,
      toBuffer,
      fromBuffer,
      'who',
      metadata,
      (error, value) => {
        const base = issued === undefined ? {} : { session: issued };
        resolve(error ? { ...base, error } : { ...base, pod: value as string });
      },
    );
    unary.on('metadata', (headers: grpc.Metadata) => {
      const value = headers.get(SESSION)[0];
      if (typeof value === 'string') issued = value;
    });
  });
}

describe('session persistence on a GRPCRoute (type Header), grpc-js client and servers', () => {
  let gw: GatewayProcess;
  let client: grpc.Client;

  beforeAll(async () => {
    for (const pod of PODS) await up(pod);
    const port = await freePort();
    gw = await startGateway({
      manifests: {
        'grpc.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [{ name: 'grpc', protocol: 'HTTP', port }]),
          service('who', NS),
          ...PODS.map((p) => serviceSlice(`who-${p.pod}`, 'who', NS, { port: p.port, pod: p.pod })),
          {
            apiVersion: 'gateway.networking.k8s.io/v1',
            kind: 'GRPCRoute',
            metadata: { name: 'who', namespace: NS },
            spec: {
              parentRefs: [{ name: 'edge' }],
              rules: [
                {
                  matches: [{ method: { service: SERVICE } }],
                  backendRefs: [{ name: 'who', port: 80 }],
                  sessionPersistence: { type: 'Header', sessionName: SESSION },
                },
              ],
            },
          },
        ),
      },
    });
    client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    await eventually(async () => {
      const answer = await call(client);
      if (answer.pod === undefined) throw new Error(String(answer.error?.message));
    }, 10_000);
  }, 30_000);

  afterAll(async () => {
    client?.close();
    await gw?.stop();
    for (const pod of PODS) pod.server?.forceShutdown();
  });

  it('pins every call that sends the value back to one pod, and sets no new value on them', async () => {
    const first = await call(client);
    expect(first.session).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const pods = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const next = await call(client, first.session);
      expect(next.error).toBeUndefined();
      expect(next.session).toBeUndefined();
      pods.add(next.pod!);
    }
    expect([...pods]).toEqual([first.pod]);
  });

  it('spreads calls without a value over both pods, each with a value of its own', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => call(client)));
    expect(new Set(answers.map((a) => a.pod))).toEqual(new Set(['pod-a', 'pod-b']));
    expect(answers.every((a) => a.session !== undefined)).toBe(true);
  });

  it('treats a forged or truncated value as none: the call is answered and gets a new value', async () => {
    const genuine = (await call(client)).session!;
    const forged = `${genuine.slice(0, -4)}AAAA`;
    for (const value of [forged, genuine.slice(0, 10), 'x'.repeat(600)]) {
      const answer = await call(client, value);
      expect(answer.error).toBeUndefined();
      expect(answer.session).toMatch(/^[A-Za-z0-9_-]{40,}$/);
      expect(answer.session).not.toBe(value);
    }
  });

  it('moves a session whose pod went away to the other pod, with a new value that then holds', async () => {
    const first = await call(client);
    const pinned = PODS.find((p) => p.pod === first.pod)!;
    const other = PODS.find((p) => p !== pinned)!;
    pinned.server?.forceShutdown();
    pinned.server = undefined;
    const moved = await eventually(async () => {
      const answer = await call(client, first.session);
      expect(answer.pod).toBe(other.pod);
      expect(answer.session).toBeDefined();
      return answer;
    }, 10_000);
    for (let i = 0; i < 10; i++) {
      const next = await call(client, moved.session);
      expect(next.pod).toBe(other.pod);
      expect(next.session).toBeUndefined();
    }
  });
});
