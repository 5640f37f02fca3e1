import type { ServerResponse } from 'node:http';
import { isGrpcRequest, sendGrpcLocalReply } from './grpc-local-reply.ts';

const BODIES = new Map<number, Buffer>();

function bodyFor(status: number, text: string): Buffer {
  let body = BODIES.get(status);
  if (body === undefined || text !== '') {
    body = Buffer.from(`${text === '' ? defaultText(status) : text}\n`);
    if (text === '') BODIES.set(status, body);
  }
  return body;
}

/** The text of the gateway's own answer of `status` when it gives none of its own. */
export function defaultText(status: number): string {
  switch (status) {
    case 400:
      return 'bad request';
    case 404:
      return 'no route';
    case 421:
      return 'misdirected request';
    case 500:
      return 'invalid backend';
    case 502:
      return 'upstream connect error or disconnect/reset';
    case 503:
      return 'no healthy upstream';
    case 504:
      return 'upstream request timeout';
    default:
      return String(status);
  }
}

/**
 * Answers a request from the gateway itself. Always `text/plain`: a gateway-made answer must never be
 * mistaken for a backend's JSON. Extra headers are a flat `[name, value, ...]` array. Returns the body's bytes.
 */
export function sendLocalReply(
  res: ServerResponse,
  status: number,
  text = '',
  extra?: readonly string[],
): number {
  if (res.headersSent) {
    res.destroy();
    return 0;
  }
  // A gRPC client reads only gRPC statuses: errors become trailers-only answers (GRPCRoute, gRPC over HTTP/2).
  if (status >= 400 && res.req !== undefined && isGrpcRequest(res.req)) {
    sendGrpcLocalReply(res, status, text === '' ? defaultText(status) : text);
    return 0;
  }
  const body = bodyFor(status, text);
  const headers: string[] = [
    'content-type',
    'text/plain; charset=utf-8',
    'content-length',
    String(body.length),
  ];
  if (extra !== undefined) for (const h of extra) headers.push(h);
  res.writeHead(status, headers);
  res.end(body);
  return body.length;
}
