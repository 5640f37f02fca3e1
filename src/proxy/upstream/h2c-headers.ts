import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import type { Dispatcher } from 'undici';

/** Connection-specific request headers HTTP/2 forbids (RFC 9113 §8.2.2); Host becomes :authority (§8.3.1). */
export const NOT_SENT: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
  'te',
  'host',
]);

/** The HTTP/2 request headers: lower-case names, repeated ones joined (cookie kept apart, RFC 9113 §8.2.3). */
export function requestHeaders(options: Dispatcher.DispatchOptions, authority: string): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {
    ':method': options.method,
    ':path': options.path,
    ':scheme': 'http',
    ':authority': authority,
    // gRPC servers require it (gRPC over HTTP/2, "Requests"); it only says the gateway takes trailers, which it does.
    te: 'trailers',
  };
  const raw = options.headers;
  if (Array.isArray(raw)) {
    for (let i = 0; i + 1 < raw.length; i += 2)
      addHeader(out, String(raw[i]), raw[i + 1] as string | string[]);
  } else if (raw != null) {
    for (const [name, value] of Object.entries(raw as Record<string, string | string[] | undefined>)) {
      if (value !== undefined) addHeader(out, name, value);
    }
  }
  return out;
}

function addHeader(out: OutgoingHttpHeaders, rawName: string, value: string | string[]): void {
  const name = rawName.toLowerCase();
  if (NOT_SENT.has(name)) {
    if (name === 'host') out[':authority'] = Array.isArray(value) ? value[0] : value;
    return;
  }
  const text = Array.isArray(value) ? value.join(', ') : value;
  const prior = out[name];
  if (prior === undefined) out[name] = text;
  else if (name === 'cookie') out[name] = Array.isArray(prior) ? [...prior, text] : [String(prior), text];
  else out[name] = `${String(prior)}, ${text}`;
}

/**
 * Response headers as the handlers take them: name, value, … as strings (as this project's HTTP/1.1 client hands
 * them over; undici's Buffers would be made here only to be read back as strings), pseudo-headers left out.
 */
export function rawResponseHeaders(headers: IncomingHttpHeaders): string[] {
  const raw: string[] = [];
  for (const name in headers) {
    if (name.charCodeAt(0) === 58 /* ':' */) continue;
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const each of value) raw.push(name, each);
    else raw.push(name, String(value));
  }
  return raw;
}

/** Trailers as undici's onComplete takes them: name, value, … strings, pseudo-headers left out. */
export function flatTrailers(headers: IncomingHttpHeaders): string[] {
  const flat: string[] = [];
  for (const name in headers) {
    if (name.charCodeAt(0) === 58) continue;
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const each of value) flat.push(name, each);
    else flat.push(name, String(value));
  }
  return flat;
}
