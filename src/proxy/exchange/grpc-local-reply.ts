import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';

/** gRPC status codes the gateway itself answers with (grpc/doc/statuscodes.md). */
export const GrpcStatus = {
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** A request from a gRPC client: `content-type: application/grpc` or `application/grpc+<codec>`. */
export function isGrpcRequest(req: IncomingMessage): boolean {
  const type = req.headers['content-type'];
  return type?.startsWith('application/grpc') === true;
}

/**
 * The gRPC status for an answer the gateway makes itself, as gRPC's HTTP-to-status table reads it
 * (grpc/doc/http-grpc-status-mapping.md), except that our own 404 (no route) is UNIMPLEMENTED, as a gRPC
 * server answers an unknown method, and a request or attempt timeout is DEADLINE_EXCEEDED.
 */
export function grpcStatusForHttp(status: number): number {
  switch (status) {
    case 400:
    case 431:
      return GrpcStatus.INTERNAL;
    case 401:
      return GrpcStatus.UNAUTHENTICATED;
    case 403:
      return GrpcStatus.PERMISSION_DENIED;
    case 404:
      return GrpcStatus.UNIMPLEMENTED;
    case 408:
    case 504:
      return GrpcStatus.DEADLINE_EXCEEDED;
    case 429:
    case 502:
    case 503:
      return GrpcStatus.UNAVAILABLE;
    case 500:
      return GrpcStatus.INTERNAL;
    default:
      return GrpcStatus.UNKNOWN;
  }
}

/**
 * Answers a gRPC request from the gateway as a gRPC server would: a trailers-only response (HTTP 200, one
 * HEADERS frame ending the stream, with `grpc-status` and `grpc-message`), never an HTML or text body.
 */
export function sendGrpcLocalReply(res: ServerResponse, httpStatus: number, message: string): void {
  const code = grpcStatusForHttp(httpStatus);
  const grpcMessage = encodeURIComponent(message === '' ? `gateway answered ${httpStatus}` : message);
  const stream = (res as unknown as { stream?: ServerHttp2Stream }).stream;
  if (stream !== undefined) {
    if (stream.destroyed || stream.headersSent) return;
    stream.respond(
      {
        ':status': 200,
        'content-type': 'application/grpc',
        'grpc-status': String(code),
        'grpc-message': grpcMessage,
      },
      { endStream: true },
    );
    return;
  }
  res.writeHead(200, [
    'content-type',
    'application/grpc',
    'grpc-status',
    String(code),
    'grpc-message',
    grpcMessage,
    'content-length',
    '0',
  ]);
  res.end();
}

const UNIT_MS: Readonly<Record<string, number>> = {
  H: 3_600_000,
  M: 60_000,
  S: 1_000,
  m: 1,
  u: 0.001,
  n: 0.000_001,
};

/**
 * The `grpc-timeout` header's value in milliseconds (gRPC over HTTP/2: at most 8 digits and a unit H, M, S, m,
 * u or n); undefined when absent or malformed, which gRPC servers treat as no deadline. The value comes from
 * the single pass over the raw request headers (upstream-request.ts): reading `req.headers` would make Node
 * build the header object for every request.
 */
export function grpcTimeoutMs(value: string | undefined): number | undefined {
  if (value === undefined || value.length < 2 || value.length > 9) return undefined;
  const unit = UNIT_MS[value[value.length - 1]!];
  const digits = value.slice(0, -1);
  if (unit === undefined || !/^\d+$/.test(digits)) return undefined;
  return Math.max(1, Math.ceil(Number(digits) * unit));
}
