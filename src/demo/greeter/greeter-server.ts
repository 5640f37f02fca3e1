import {
  createServer,
  type Http2Session,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';
import { listen } from '../../net/listen.ts';
import {
  decodeHelloRequest,
  encodeHelloReply,
  GREETER_METHODS,
  HELLO_STREAM_REPLIES,
  type HelloReply,
  type HelloRequest,
} from './greeter-messages.ts';
import { encodeGrpcFrame, GrpcFrameReader } from './grpc-frames.ts';
import { encodeGrpcMessage, GRPC_STATUS } from './grpc-status.ts';

/** Who a greeter pod says it is in every reply. */
export interface GreeterIdentity {
  readonly pod: string;
  readonly cluster: string;
  readonly zone: string;
}

export interface GreeterServerOptions {
  readonly host?: string;
  readonly port?: number;
  readonly identity: GreeterIdentity;
}

export interface GreeterServer {
  readonly port: number;
  /** Stops listening and cuts every open HTTP/2 connection, as a pod that dies does. */
  close(): Promise<void>;
}

type Handler = (request: HelloRequest, identity: GreeterIdentity) => HelloReply[];

const HANDLERS = new Map<string, Handler>([
  [GREETER_METHODS.Hello, (request, identity) => [reply(identity, `hello ${request.name}`)]],
  [
    GREETER_METHODS.HelloStream,
    (request, identity) =>
      Array.from({ length: HELLO_STREAM_REPLIES }, (_, i) =>
        reply(identity, `hello ${request.name} (${i + 1}/${HELLO_STREAM_REPLIES})`),
      ),
  ],
]);

function reply(identity: GreeterIdentity, message: string): HelloReply {
  return { message, pod: identity.pod, cluster: identity.cluster, zone: identity.zone };
}

/** A response with no messages: status in the HEADERS frame that ends the stream ("Trailers-Only"). */
function respondWithStatus(stream: ServerHttp2Stream, status: number, message: string): void {
  if (stream.destroyed || stream.headersSent) return;
  stream.respond(
    {
      ':status': 200,
      'content-type': 'application/grpc',
      'grpc-status': String(status),
      'grpc-message': encodeGrpcMessage(message),
    },
    { endStream: true },
  );
}

function respondWithMessages(stream: ServerHttp2Stream, messages: readonly Buffer[]): void {
  if (stream.destroyed) return;
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.once('wantTrailers', () => {
    const trailers: OutgoingHttpHeaders = { 'grpc-status': String(GRPC_STATUS.OK) };
    stream.sendTrailers(trailers);
  });
  for (const message of messages) stream.write(encodeGrpcFrame(message));
  stream.end();
}

function handleStream(
  identity: GreeterIdentity,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
): void {
  stream.on('error', () => {});
  const contentType = headers['content-type'] ?? '';
  if (headers[':method'] !== 'POST' || !/^application\/grpc(?:$|[+;])/.test(contentType)) {
    // What PROTOCOL-HTTP2.md asks of a gRPC server sent something that is not gRPC.
    stream.respond({ ':status': 415, 'content-type': 'text/plain' });
    stream.end('this pod speaks gRPC: POST with content-type application/grpc\n');
    return;
  }
  const handler = HANDLERS.get(headers[':path'] ?? '');
  if (handler === undefined) {
    stream.resume();
    respondWithStatus(stream, GRPC_STATUS.UNIMPLEMENTED, `unknown method ${headers[':path'] ?? ''}`);
    return;
  }
  const reader = new GrpcFrameReader();
  const requests: Buffer[] = [];
  let failed = false;
  stream.on('data', (chunk: Buffer) => {
    if (failed) return;
    try {
      requests.push(...reader.push(chunk));
    } catch (error) {
      failed = true;
      respondWithStatus(stream, GRPC_STATUS.INTERNAL, (error as Error).message);
    }
  });
  stream.on('end', () => {
    if (failed) return;
    const [request] = requests;
    if (request === undefined || requests.length > 1 || reader.partial) {
      respondWithStatus(stream, GRPC_STATUS.INTERNAL, 'a unary request carries exactly one message');
      return;
    }
    let decoded: HelloRequest;
    try {
      decoded = decodeHelloRequest(request);
    } catch (error) {
      respondWithStatus(stream, GRPC_STATUS.INTERNAL, `bad HelloRequest: ${(error as Error).message}`);
      return;
    }
    respondWithMessages(stream, handler(decoded, identity).map(encodeHelloReply));
  });
}

/**
 * The demo's gRPC pod: `demo.Greeter` (greeter.proto) over cleartext HTTP/2 with prior knowledge (h2c), as a
 * GRPCRoute backend is spoken to. Built on node:http2 alone, so the demo needs no gRPC library.
 */
export async function startGreeterServer(options: GreeterServerOptions): Promise<GreeterServer> {
  const server = createServer();
  const sessions = new Set<Http2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('error', () => {});
    session.once('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => handleStream(options.identity, stream, headers));
  const port = await listen(server, options.host ?? '127.0.0.1', options.port ?? 0);
  return {
    port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  };
}
