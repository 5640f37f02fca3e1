import type { Dispatcher } from 'undici';
import { NOT_SENT } from './h2c-headers.ts';

/**
 * Request and response header fields in the flat form of the project's HTTP/2 codec (src/net/http2:
 * `[name0, value0, name1, value1, ...]`), for the h2c upstream on that codec (js-h2c-upstream.ts). The same
 * translation as h2c-headers.ts does for node:http2's header objects, without building one.
 */

/** Where `:authority`'s value sits in the fields `requestFields` returns. */
const AUTHORITY_VALUE = 5;

/**
 * The request's fields: pseudo-headers first, `te: trailers` (gRPC servers require it; it only says the gateway
 * takes trailers, which it does), then the request's own headers with lower-case names, each as sent (repeated
 * fields stay apart: RFC 9113 §8.2.3 and RFC 9110 §5.3 make them one list either way).
 */
export function requestFields(options: Dispatcher.DispatchOptions, authority: string): string[] {
  const fields = [
    ':method',
    options.method,
    ':scheme',
    'http',
    ':authority',
    authority,
    ':path',
    options.path,
    'te',
    'trailers',
  ];
  const raw = options.headers;
  if (Array.isArray(raw)) {
    for (let i = 0; i + 1 < raw.length; i += 2)
      addField(fields, String(raw[i]), raw[i + 1] as string | string[]);
  } else if (raw != null) {
    for (const name in raw as Record<string, string | string[] | undefined>) {
      const value = (raw as Record<string, string | string[] | undefined>)[name];
      if (value !== undefined) addField(fields, name, value);
    }
  }
  return fields;
}

function addField(fields: string[], rawName: string, value: string | string[]): void {
  const name = rawName.toLowerCase();
  if (NOT_SENT.has(name)) {
    if (name === 'host') fields[AUTHORITY_VALUE] = Array.isArray(value) ? (value[0] ?? '') : value;
    return;
  }
  if (Array.isArray(value)) for (const each of value) fields.push(name, each);
  else fields.push(name, value);
}

/** True when a value holds a byte no header field may carry (RFC 9113 §8.2.1: NUL, CR, LF). */
export function hasForbiddenByte(fields: readonly string[]): boolean {
  for (let i = 0; i < fields.length; i++) {
    const text = fields[i]!;
    for (let j = 0; j < text.length; j++) {
      const code = text.charCodeAt(j);
      if (code === 0 || code === 10 || code === 13) return true;
    }
  }
  return false;
}

/** The response's `:status`, or 0 when there is not exactly one of three digits (a malformed response). */
export function responseStatus(fields: readonly string[]): number {
  let status = 0;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i]!;
    if (name.charCodeAt(0) !== 58 /* ':' */) break;
    if (name !== ':status' || status !== 0) return 0;
    const value = fields[i + 1]!;
    if (value.length !== 3) return 0;
    for (let j = 0; j < 3; j++) {
      const digit = value.charCodeAt(j) - 48;
      if (digit < 0 || digit > 9) return 0;
      status = status * 10 + digit;
    }
    if (status < 100) return 0;
  }
  return status;
}

/** Fields as the handlers take headers and trailers: name, value, … as strings, pseudo-headers left out. */
export function regularFields(fields: string[]): string[] {
  let first = 0;
  while (first < fields.length && fields[first]!.charCodeAt(0) === 58) first += 2;
  return first === 0 ? fields : fields.slice(first);
}
