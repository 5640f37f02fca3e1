import { resolve } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** src/demo/greeter/greeter.proto read by protobufjs: a real codec to hold the hand-written wire format to. */
export const GREETER_PROTO = resolve(import.meta.dirname, '../../src/demo/greeter/greeter.proto');

export function greeterDefinition(): protoLoader.PackageDefinition {
  return protoLoader.loadSync(GREETER_PROTO, { keepCase: true });
}

export interface HelloReply {
  readonly message: string;
  readonly pod: string;
  readonly cluster: string;
  readonly zone: string;
}

export type GreeterStub = grpc.Client & {
  Hello(
    request: { name: string },
    callback: (error: grpc.ServiceError | null, reply?: HelloReply) => void,
  ): void;
  HelloStream(request: { name: string }): grpc.ClientReadableStream<HelloReply>;
};

/** A grpc-js client of demo.Greeter at `host:port`, over h2c; `authority` overrides the :authority it sends. */
export function greeterStub(target: string, authority?: string): GreeterStub {
  const loaded = grpc.loadPackageDefinition(greeterDefinition()) as unknown as {
    demo: {
      Greeter: new (
        address: string,
        credentials: grpc.ChannelCredentials,
        options?: grpc.ChannelOptions,
      ) => GreeterStub;
    };
  };
  const options = authority === undefined ? {} : { 'grpc.default_authority': authority };
  return new loaded.demo.Greeter(target, grpc.credentials.createInsecure(), options);
}

export function hello(stub: GreeterStub, name: string): Promise<HelloReply> {
  return new Promise((done, fail) =>
    stub.Hello({ name }, (error, reply) => (error ? fail(error) : done(reply as HelloReply))),
  );
}

export function helloStream(stub: GreeterStub, name: string): Promise<HelloReply[]> {
  return new Promise((done, fail) => {
    const replies: HelloReply[] = [];
    const call = stub.HelloStream({ name });
    call.on('data', (reply: HelloReply) => replies.push(reply));
    call.on('error', fail);
    call.on('end', () => done(replies));
  });
}
