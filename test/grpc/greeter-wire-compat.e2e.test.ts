import { connect } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GreeterClient } from '../../src/demo/greeter/greeter-client.ts';
import { type GreeterServer, startGreeterServer } from '../../src/demo/greeter/greeter-server.ts';
import { freePort } from '../support/gateway-process.ts';
import { greeterDefinition, greeterStub, hello, helloStream } from '../support/greeter-stub.ts';

/**
 * The demo's node:http2 gRPC pieces against grpc-js and protobufjs directly, no gateway between: the server
 * answers a real gRPC client, and the client reads a real gRPC server, statuses and trailers included.
 */
const IDENTITY = { pod: 'greeter-1', cluster: 'east-1', zone: 'us-east-1a' };

describe('the Greeter server, called by grpc-js', () => {
  let server: GreeterServer;

  beforeAll(async () => {
    server = await startGreeterServer({ identity: IDENTITY });
  });
  afterAll(() => server?.close());

  it('answers Hello and streams HelloStream', async () => {
    const stub = greeterStub(`127.0.0.1:${server.port}`);
    expect(await hello(stub, 'you')).toEqual({ message: 'hello you', ...IDENTITY });
    expect((await helloStream(stub, 's')).map((r) => r.message)).toEqual([
      'hello s (1/3)',
      'hello s (2/3)',
      'hello s (3/3)',
    ]);
    stub.close();
  });

  it('says UNIMPLEMENTED for another method, and 415 to a request that is not gRPC', async () => {
    const client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    const code = await new Promise<number | undefined>((done) =>
      client.makeUnaryRequest(
        '/demo.Greeter/Goodbye',
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(0),
        (error) => done(error?.code),
      ),
    );
    client.close();
    expect(code).toBe(grpc.status.UNIMPLEMENTED);

    const session = connect(`http://127.0.0.1:${server.port}`);
    const status = await new Promise<unknown>((done) => {
      const stream = session.request({ ':method': 'GET', ':path': '/' });
      stream.on('response', (headers) => done(headers[':status']));
      stream.resume();
      stream.end();
    });
    session.close();
    expect(status).toBe(415);
  });
});

describe('the Greeter client, calling a grpc-js server', () => {
  let server: grpc.Server;
  let port: number;

  beforeAll(async () => {
    const definition = grpc.loadPackageDefinition(greeterDefinition()) as unknown as {
      demo: { Greeter: { service: grpc.ServiceDefinition } };
    };
    server = new grpc.Server();
    server.addService(definition.demo.Greeter.service, {
      Hello: (
        call: grpc.ServerUnaryCall<{ name: string }, unknown>,
        callback: grpc.sendUnaryData<unknown>,
      ) => {
        if (call.request.name === 'fail')
          callback({ code: grpc.status.FAILED_PRECONDITION, details: 'nicht heute: 100%' });
        else callback(null, { message: `hi ${call.request.name}`, pod: 'grpc-js', cluster: 'c', zone: 'z' });
      },
      HelloStream: (call: grpc.ServerWritableStream<{ name: string }, unknown>) => {
        for (const n of [1, 2]) call.write({ message: `${call.request.name} ${n}`, pod: 'grpc-js' });
        call.end();
      },
    });
    port = await new Promise<number>((done, fail) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? fail(e) : done(p),
      ),
    );
  });
  afterAll(() => server?.forceShutdown());

  it('reads replies, streams and error statuses with their percent-encoded message', async () => {
    const client = new GreeterClient(`http://127.0.0.1:${port}`);
    // grpc-js says `grpc-message: OK` on success; the demo's server sends none.
    expect(await client.call('Hello', { name: 'ü' })).toMatchObject({
      grpcStatus: 0,
      httpStatus: 200,
      replies: [{ message: 'hi ü', pod: 'grpc-js', cluster: 'c', zone: 'z' }],
    });
    const streamed = await client.call('HelloStream', { name: 's' });
    expect(streamed.replies.map((r) => r.message)).toEqual(['s 1', 's 2']);
    expect(streamed.grpcStatus).toBe(0);
    expect(await client.call('Hello', { name: 'fail' })).toMatchObject({
      grpcStatus: grpc.status.FAILED_PRECONDITION,
      grpcMessage: 'nicht heute: 100%',
      replies: [],
    });
    client.close();
  });

  it('reports a refused connection as UNAVAILABLE rather than throwing', async () => {
    const client = new GreeterClient(`http://127.0.0.1:${await freePort()}`, { timeoutMs: 2000 });
    expect((await client.call('Hello', { name: 'x' })).grpcStatus).toBe(grpc.status.UNAVAILABLE);
    client.close();
  });
});
