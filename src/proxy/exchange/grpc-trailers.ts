import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';

/**
 * Hands an upstream response's trailers to the client response. undici reports them as a flat raw array
 * (HTTP/1.1 chunked) or as an HTTP/2 headers object; pseudo-headers and framing fields never travel.
 */
export function forwardTrailers(res: ServerResponse, trailers: unknown): void {
  const out: Record<string, string> = {};
  let any = false;
  if (Array.isArray(trailers)) {
    for (let i = 0; i + 1 < trailers.length; i += 2) {
      const name = String(trailers[i]).toLowerCase();
      if (name.startsWith(':') || name === 'content-length' || name === 'transfer-encoding') continue;
      out[name] = String(trailers[i + 1]);
      any = true;
    }
  } else if (typeof trailers === 'object' && trailers !== null) {
    for (const [name, value] of Object.entries(trailers as Record<string, unknown>)) {
      if (name.startsWith(':') || value === undefined) continue;
      out[name] = Array.isArray(value) ? value.join(', ') : String(value);
      any = true;
    }
  }
  if (any) res.addTrailers(out);
}

/**
 * Sends an upstream gRPC Trailers-Only answer (its headers carry `grpc-status`) to an HTTP/2 client as one
 * HEADERS frame that ends the stream; returns false (nothing sent) for any other answer.
 */
export function respondTrailersOnly(
  res: ServerResponse,
  status: number,
  headers: readonly string[],
): boolean {
  let grpcStatus = false;
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i]!.toLowerCase() === 'grpc-status') grpcStatus = true;
  }
  const stream = (res as unknown as { stream?: ServerHttp2Stream }).stream;
  if (!grpcStatus || stream === undefined || stream.destroyed || stream.headersSent) return false;
  const out: OutgoingHttpHeaders = { ':status': status };
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!.toLowerCase();
    if (name === 'content-length' || name === 'transfer-encoding') continue;
    out[name] = headers[i + 1]!;
  }
  stream.respond(out, { endStream: true });
  return true;
}
