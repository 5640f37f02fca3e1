import type { ServerResponse } from 'node:http';

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
