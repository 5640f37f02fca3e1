import { connect as connectHttp2 } from 'node:http2';
import { createConnection } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, importedSlice, serviceImport, yamlDocs } from '../support/manifests.ts';

/**
 * gRPC through the gateway with a real gRPC stack on both ends (@grpc/grpc-js): a GRPCRoute to a ServiceImport
 * whose endpoints are grpc-js servers in two simulated clusters. Messages are plain UTF-8 strings (identity
 * codec), so the test needs no protobuf code; the framing, HTTP/2 and trailers are gRPC's own.
 */
const NS = 'rpc';
const SERVICE = 'test.Echo';
const toBuffer = (text: string): Buffer => Buffer.from(text, 'utf8');
const fromBuffer = (buffer: Buffer): string => buffer.toString('utf8');

interface Pod {
  readonly pod: string;
  readonly cluster: string;
  readonly zone: string;
  port: number;
  server?: grpc.Server | undefined;
}

const PODS: Pod[] = [
  { pod: 'east-pod', cluster: 'east-1', zone: 'us-east-1a', port: 0 },
  { pod: 'west-pod', cluster: 'west-1', zone: 'us-west-1a', port: 0 },
];

function method(name: string, requestStream: boolean, responseStream: boolean) {
  return {
    path: `/${SERVICE}/${name}`,
    requestStream,
    responseStream,
    requestSerialize: toBuffer,
    requestDeserialize: fromBuffer,
    responseSerialize: toBuffer,
    responseDeserialize: fromBuffer,
  };
}

const DEFINITION = {
  Unary: method('Unary', false, false),
  ServerStream: method('ServerStream', false, true),
  ClientStream: method('ClientStream', true, false),
  Bidi: method('Bidi', true, true),
} as const;

function implementation(pod: string): grpc.UntypedServiceImplementation {
  return {
    Unary: (call: grpc.ServerUnaryCall<string, string>, callback: grpc.sendUnaryData<string>) => {
      if (call.request === 'fail') {
        const trailer = new grpc.Metadata();
        trailer.set('x-detail', `from ${pod}`);
        callback({ code: grpc.status.FAILED_PRECONDITION, details: 'not today', metadata: trailer });
        return;
      }
      callback(null, `${pod}:${call.request}:${String(call.metadata.get('x-team')[0] ?? '')}`);
    },
    ServerStream: (call: grpc.ServerWritableStream<string, string>) => {
      for (let i = 0; i < 5; i++) call.write(`${pod}:${call.request}:${i}`);
      call.end();
    },
    ClientStream: (call: grpc.ServerReadableStream<string, string>, callback: grpc.sendUnaryData<string>) => {
      const parts: string[] = [];
      call.on('data', (part: string) => parts.push(part));
      call.on('end', () => callback(null, `${pod}:${parts.join('+')}`));
    },
    Bidi: (call: grpc.ServerDuplexStream<string, string>) => {
      call.on('data', (part: string) => call.write(`${pod}:${part}`));
      call.on('end', () => call.end());
    },
  };
}

async function up(pod: Pod): Promise<void> {
  const server = new grpc.Server();
  server.addService(DEFINITION, implementation(pod.pod));
  pod.port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${pod.port}`, grpc.ServerCredentials.createInsecure(), (err, port) =>
      err ? reject(err) : resolve(port),
    ),
  );
  pod.server = server;
}

function down(pod: Pod): void {
  pod.server?.forceShutdown();
  pod.server = undefined;
}

type Client = grpc.Client;

function unary(client: Client, name: string, request: string, metadata = new grpc.Metadata()) {
  return new Promise<{ value?: string; error?: grpc.ServiceError }>((resolve) => {
    client.makeUnaryRequest(`/${SERVICE}/${name}`, toBuffer, fromBuffer, request, metadata, (error, value) =>
      resolve(error ? { error } : { value: value as string }),
    );
  });
}

/** Writes `request` on a fresh TCP connection and resolves with the first line of the answer. */
function rawHttp1(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(port, '127.0.0.1', () => socket.write(request));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const end = received.indexOf('\r\n');
      if (end >= 0) {
        socket.destroy();
        resolve(received.slice(0, end + 2));
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}

/** node:http2 on both sides (the default), then the project's own HTTP/2 codec on both (`--http2-codec js`). */
const CODECS = [
  { codec: 'nghttp2', args: [] },
  { codec: 'js', args: ['--http2-codec', 'js'] },
];

describe.each(CODECS)(
  'gRPC through the gateway (GRPCRoute to a ServiceImport, real grpc-js client and servers, $codec codec)',
  ({ args: codecArgs }) => {
    let gw: GatewayProcess;
    let gwPort: number;
    let client: Client;

    beforeAll(async () => {
      for (const pod of PODS) await up(pod);
      const port = await freePort();
      gwPort = port;
      gw = await startGateway({
        args: ['--cluster', 'east-1', '--zone', 'us-east-1a', ...codecArgs],
        manifests: {
          'grpc.yaml': yamlDocs(
            gatewayClass(),
            gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port }]),
            serviceImport('echo', NS, 'PreferSameZone'),
            {
              apiVersion: 'gateway.networking.k8s.io/v1',
              kind: 'GRPCRoute',
              metadata: { name: 'echo', namespace: NS },
              spec: {
                parentRefs: [{ name: 'edge' }],
                rules: [
                  {
                    matches: [{ method: { service: SERVICE } }],
                    backendRefs: [
                      { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'echo', port: 80 },
                    ],
                  },
                ],
              },
            },
            ...PODS.map((pod) =>
              importedSlice(`echo-${pod.pod}`, 'echo', NS, pod.cluster, {
                port: pod.port,
                pod: pod.pod,
                zone: pod.zone,
              }),
            ),
          ),
        },
      });
      client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      await eventually(async () => {
        const answer = await unary(client, 'Unary', 'ready');
        if (answer.value === undefined) throw new Error(String(answer.error?.message));
      }, 10_000);
    }, 30_000);

    afterAll(async () => {
      client?.close();
      await gw?.stop();
      for (const pod of PODS) down(pod);
    });

    it('answers a unary call from the nearest cluster, with request metadata passed on', async () => {
      const metadata = new grpc.Metadata();
      metadata.set('x-team', 'blue');
      expect(await unary(client, 'Unary', 'hi', metadata)).toEqual({ value: 'east-pod:hi:blue' });
    });

    it("passes the backend's status, message and trailing metadata through", async () => {
      const { error } = await unary(client, 'Unary', 'fail');
      expect(error?.code).toBe(grpc.status.FAILED_PRECONDITION);
      expect(error?.details).toBe('not today');
      expect(error?.metadata.get('x-detail')).toEqual(['from east-pod']);
    });

    it('streams server, client and bidirectional calls', async () => {
      const server = await new Promise<string[]>((resolve, reject) => {
        const got: string[] = [];
        const call = client.makeServerStreamRequest(`/${SERVICE}/ServerStream`, toBuffer, fromBuffer, 'n');
        call.on('data', (m: string) => got.push(m));
        call.on('error', reject);
        call.on('end', () => resolve(got));
      });
      expect(server).toEqual([0, 1, 2, 3, 4].map((i) => `east-pod:n:${i}`));

      const summed = await new Promise<string>((resolve, reject) => {
        const call = client.makeClientStreamRequest(
          `/${SERVICE}/ClientStream`,
          toBuffer,
          fromBuffer,
          (e, v) => (e ? reject(e) : resolve(v as string)),
        );
        for (const part of ['a', 'b', 'c']) call.write(part);
        call.end();
      });
      expect(summed).toBe('east-pod:a+b+c');

      // Ping-pong: each message is sent only after the previous answer arrived, so a proxy that buffered either
      // direction until the end of the stream would hang here.
      const call = client.makeBidiStreamRequest(`/${SERVICE}/Bidi`, toBuffer, fromBuffer);
      const replies: string[] = [];
      for (const part of ['one', 'two', 'three']) {
        const reply = new Promise<string>((resolve, reject) => {
          call.once('data', resolve);
          call.once('error', reject);
        });
        call.write(part);
        replies.push(await reply);
      }
      const ended = new Promise<void>((resolve) => call.on('status', () => resolve()));
      call.end();
      await ended;
      expect(replies).toEqual(['east-pod:one', 'east-pod:two', 'east-pod:three']);
    });

    it('answers a method no route matches with UNIMPLEMENTED', async () => {
      const { error } = await new Promise<{ error?: grpc.ServiceError }>((resolve) => {
        client.makeUnaryRequest('/other.Service/Call', toBuffer, fromBuffer, 'x', (e) =>
          resolve(e ? { error: e } : {}),
        );
      });
      expect(error?.code).toBe(grpc.status.UNIMPLEMENTED);
    });

    // Bad input (issue 13): none of these may disturb the calls that follow.
    it('an h2c upgrade over HTTP/1.1 is ignored: a plain HTTP/1.1 answer from the backend, never 101 or a 5xx', async () => {
      const head = await rawHttp1(
        gwPort,
        'GET /test.Echo/Unary HTTP/1.1\r\nhost: rpc.example\r\nconnection: Upgrade, HTTP2-Settings\r\n' +
          'upgrade: h2c\r\nhttp2-settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n',
      );
      expect(head).toMatch(/^HTTP\/1\.1 4\d\d /);
      expect(await unary(client, 'Unary', 'after-upgrade')).toEqual({ value: 'east-pod:after-upgrade:' });
    });

    it('a malformed gRPC frame gets a gRPC status, not a gateway error, and the next call is served', async () => {
      const session = connectHttp2(`http://127.0.0.1:${gwPort}`);
      try {
        const answer = await new Promise<{ status?: number; grpcStatus?: string }>((resolve, reject) => {
          const stream = session.request({
            ':method': 'POST',
            ':path': `/${SERVICE}/Unary`,
            'content-type': 'application/grpc',
            te: 'trailers',
          });
          let status: number | undefined;
          let grpcStatus: string | undefined;
          stream.on('response', (headers) => {
            status = Number(headers[':status']);
            grpcStatus ??= headers['grpc-status'] as string | undefined;
          });
          stream.on('trailers', (trailers) => {
            grpcStatus = trailers['grpc-status'] as string | undefined;
          });
          stream.on('error', reject);
          stream.on('close', () =>
            resolve({ ...(status ? { status } : {}), ...(grpcStatus ? { grpcStatus } : {}) }),
          );
          stream.resume();
          // A length prefix of 4 GiB - 1 followed by three bytes: no gRPC server can read this message.
          stream.end(Buffer.from([0, 0xff, 0xff, 0xff, 0xff, 0x61, 0x62, 0x63]));
        });
        expect(answer.status).toBe(200);
        expect(answer.grpcStatus).toBeDefined();
        expect(answer.grpcStatus).not.toBe('0');
      } finally {
        session.close();
      }
      expect(await unary(client, 'Unary', 'after-garbage')).toEqual({ value: 'east-pod:after-garbage:' });
    });

    it("a plain HTTP/1.1 request to the gRPC route is the backend's to refuse: a 4xx, not a gateway 5xx", async () => {
      const head = await rawHttp1(
        gwPort,
        'POST /test.Echo/Unary HTTP/1.1\r\nhost: rpc.example\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n' +
          'connection: close\r\n\r\nhello',
      );
      expect(head).toMatch(/^HTTP\/1\.1 4\d\d /);
      expect(await unary(client, 'Unary', 'after-plain')).toEqual({ value: 'east-pod:after-plain:' });
    });

    it('fails over to the other cluster when the near backend goes away, and says UNAVAILABLE when none is left', async () => {
      down(PODS[0]!);
      await eventually(async () => {
        const answer = await unary(client, 'Unary', 'again');
        if (answer.value !== 'west-pod:again:')
          throw new Error(JSON.stringify(answer.value ?? answer.error?.message));
      }, 10_000);
      // Once it answers from the far cluster, every call does: the failed endpoint never reaches the client.
      for (let i = 0; i < 10; i++)
        expect(await unary(client, 'Unary', 'steady')).toEqual({ value: 'west-pod:steady:' });
      down(PODS[1]!);
      const { error } = await unary(client, 'Unary', 'nobody');
      expect(error?.code).toBe(grpc.status.UNAVAILABLE);
      expect(error?.details).not.toMatch(/</);
    });
  },
);
