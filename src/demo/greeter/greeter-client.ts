import { type ClientHttp2Session, connect, constants, type IncomingHttpHeaders } from 'node:http2';
import {
  decodeHelloReply,
  encodeHelloRequest,
  GREETER_METHODS,
  type GreeterMethod,
  type HelloReply,
  type HelloRequest,
} from './greeter-messages.ts';
import { encodeGrpcFrame, GrpcFrameReader } from './grpc-frames.ts';
import { decodeGrpcMessage, GRPC_STATUS } from './grpc-status.ts';

export interface GreeterCallResult {
  readonly grpcStatus: number;
  readonly grpcMessage: string;
  readonly replies: readonly HelloReply[];
  /** The HTTP status, when a response arrived at all. */
  readonly httpStatus?: number;
}

export interface GreeterClientOptions {
  /** Per call, sent as `grpc-timeout` and enforced here too. Default 5 s. */
  readonly timeoutMs?: number;
  /** The `:authority` to send instead of the URL's host, e.g. `greeter.demo.svc.clusterset.local:50051` east-west. */
  readonly authority?: string;
}

/** What a gRPC client reads into a non-gRPC HTTP answer (grpc/grpc doc/http-grpc-status-mapping.md). */
function statusOfHttp(httpStatus: number): number {
  if (httpStatus === 400) return GRPC_STATUS.INTERNAL;
  if (httpStatus === 401) return GRPC_STATUS.UNAUTHENTICATED;
  if (httpStatus === 403) return GRPC_STATUS.PERMISSION_DENIED;
  if (httpStatus === 404) return GRPC_STATUS.UNIMPLEMENTED;
  if ([429, 502, 503, 504].includes(httpStatus)) return GRPC_STATUS.UNAVAILABLE;
  return GRPC_STATUS.UNKNOWN;
}

function statusIn(headers: IncomingHttpHeaders): { status: number; message: string } | undefined {
  const status = headers['grpc-status'];
  if (typeof status !== 'string') return undefined;
  const message = headers['grpc-message'];
  return { status: Number(status), message: typeof message === 'string' ? decodeGrpcMessage(message) : '' };
}

/**
 * A dependency-free client of the demo's `demo.Greeter`: gRPC over h2c on one HTTP/2 connection (node:http2),
 * reopened when the far end closes it. Transport failures come back as UNAVAILABLE, as gRPC clients report
 * them, rather than as exceptions.
 */
export class GreeterClient {
  readonly #url: string;
  readonly #timeoutMs: number;
  readonly #authority: string | undefined;
  #session: ClientHttp2Session | undefined;

  constructor(url: string, options: GreeterClientOptions = {}) {
    this.#url = url;
    this.#timeoutMs = options.timeoutMs ?? 5000;
    this.#authority = options.authority;
  }

  #connection(): ClientHttp2Session {
    if (this.#session && !this.#session.closed && !this.#session.destroyed) return this.#session;
    const session = connect(this.#url);
    session.on('error', () => {});
    this.#session = session;
    return session;
  }

  call(method: GreeterMethod, request: HelloRequest): Promise<GreeterCallResult> {
    return new Promise((resolve) => {
      const stream = this.#connection().request({
        ':method': 'POST',
        ':path': GREETER_METHODS[method],
        ...(this.#authority === undefined ? {} : { ':authority': this.#authority }),
        'content-type': 'application/grpc',
        te: 'trailers',
        'grpc-timeout': `${this.#timeoutMs}m`,
      });
      const reader = new GrpcFrameReader();
      const replies: HelloReply[] = [];
      let httpStatus: number | undefined;
      let outcome: { status: number; message: string } | undefined;
      const fail = (status: number, message: string): void => {
        outcome ??= { status, message };
      };
      const timer = setTimeout(() => {
        fail(GRPC_STATUS.DEADLINE_EXCEEDED, `no answer within ${this.#timeoutMs} ms`);
        stream.close(constants.NGHTTP2_CANCEL);
      }, this.#timeoutMs);
      stream.on('response', (headers) => {
        httpStatus = Number(headers[':status']);
        const trailersOnly = statusIn(headers);
        if (trailersOnly) outcome ??= trailersOnly;
      });
      stream.on('data', (chunk: Buffer) => {
        try {
          for (const message of reader.push(chunk)) replies.push(decodeHelloReply(message));
        } catch (error) {
          fail(GRPC_STATUS.INTERNAL, `bad response: ${(error as Error).message}`);
          stream.close(constants.NGHTTP2_CANCEL);
        }
      });
      stream.on('trailers', (trailers) => {
        const status = statusIn(trailers);
        if (status) outcome ??= status;
      });
      stream.on('error', (error) => fail(GRPC_STATUS.UNAVAILABLE, error.message));
      stream.on('close', () => {
        clearTimeout(timer);
        if (outcome === undefined) {
          if (httpStatus === undefined)
            fail(GRPC_STATUS.UNAVAILABLE, 'the connection closed before an answer');
          else if (httpStatus !== 200) fail(statusOfHttp(httpStatus), `HTTP status ${httpStatus}`);
          else fail(GRPC_STATUS.INTERNAL, 'the response ended without grpc-status');
        }
        const { status, message } = outcome ?? { status: GRPC_STATUS.UNKNOWN, message: '' };
        resolve({
          grpcStatus: status,
          grpcMessage: message,
          replies,
          ...(httpStatus === undefined ? {} : { httpStatus }),
        });
      });
      stream.end(encodeGrpcFrame(encodeHelloRequest(request)));
    });
  }

  close(): void {
    this.#session?.close();
    this.#session = undefined;
  }
}
