import { decodeStringFields, encodeStringFields } from './protobuf-strings.ts';

/** The demo's gRPC service, as greeter.proto beside this file declares it. */
export const GREETER_SERVICE = 'demo.Greeter';
export const GREETER_METHODS = {
  Hello: `/${GREETER_SERVICE}/Hello`,
  HelloStream: `/${GREETER_SERVICE}/HelloStream`,
} as const;
export type GreeterMethod = keyof typeof GREETER_METHODS;

/** How many replies HelloStream sends for one request. */
export const HELLO_STREAM_REPLIES = 3;

export interface HelloRequest {
  readonly name: string;
}

/** Who served the call: the pod, its cluster and zone. */
export interface HelloReply {
  readonly message: string;
  readonly pod: string;
  readonly cluster: string;
  readonly zone: string;
}

export function encodeHelloRequest(request: HelloRequest): Buffer {
  return encodeStringFields([[1, request.name]]);
}

export function decodeHelloRequest(bytes: Uint8Array): HelloRequest {
  return { name: decodeStringFields(bytes).get(1) ?? '' };
}

export function encodeHelloReply(reply: HelloReply): Buffer {
  return encodeStringFields([
    [1, reply.message],
    [2, reply.pod],
    [3, reply.cluster],
    [4, reply.zone],
  ]);
}

export function decodeHelloReply(bytes: Uint8Array): HelloReply {
  const fields = decodeStringFields(bytes);
  return {
    message: fields.get(1) ?? '',
    pod: fields.get(2) ?? '',
    cluster: fields.get(3) ?? '',
    zone: fields.get(4) ?? '',
  };
}
