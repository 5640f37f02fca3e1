/**
 * A strict reader of HTTP/1.1 request heads for the lean server path (lean-http1-server.ts). It accepts only
 * the plain, unambiguous subset of RFC 9112 that a keep-alive proxy sees nearly all the time, and answers
 * `undefined` for everything else: the connection is then handed to Node's http.Server, whose parser and the
 * listener's guard answer it exactly as they always have. So this reader never refuses anything itself and
 * never has to match Node's error answers: it only has to be no more lenient than Node, and it is much
 * stricter (no obs-fold, no bare CR or LF, no space before a colon, token names, no obs-text, a body framed only
 * by one plain Content-Length).
 */

/** What the lean path serves; anything else goes to Node's server. */
export interface LeanRequestHead {
  readonly method: string;
  /** Origin form (`/path?query`), exactly as sent. */
  readonly url: string;
  /** `[name, value, ...]`, names as sent, values without surrounding whitespace (as Node gives them). */
  readonly rawHeaders: string[];
  /** The client asked to close the connection after this request (`Connection: close`). */
  readonly close: boolean;
  /** Bytes of the head, the empty line included. */
  readonly length: number;
  /** Bytes of the body that follows (its one `Content-Length`); 0 without one. */
  readonly bodyLength: number;
}

const CR = 13;
const LF = 10;
const SP = 32;
const HTAB = 9;
const COLON = 58;

/** Methods served lean; the rest (CONNECT, TRACE, extension methods) take Node's path. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']);

/** RFC 9110 §5.6.2 tchar. */
const TOKEN: readonly boolean[] = (() => {
  const t: boolean[] = new Array(256).fill(false);
  for (let c = 0x30; c <= 0x39; c++) t[c] = true;
  for (let c = 0x41; c <= 0x5a; c++) t[c] = true;
  for (let c = 0x61; c <= 0x7a; c++) t[c] = true;
  for (const ch of "!#$%&'*+-.^_`|~") t[ch.charCodeAt(0)] = true;
  return t;
})();

/**
 * Bytes of an origin-form target served lean: RFC 3986 unreserved, sub-delims, `:@/?%`. Characters a
 * parser might judge differently (`"<>\^`{|}#[]`) take Node's path.
 */
const TARGET: readonly boolean[] = (() => {
  const t: boolean[] = new Array(256).fill(false);
  for (let c = 0x30; c <= 0x39; c++) t[c] = true;
  for (let c = 0x41; c <= 0x5a; c++) t[c] = true;
  for (let c = 0x61; c <= 0x7a; c++) t[c] = true;
  for (const ch of "-._~!$&'()*+,;=:@/?%") t[ch.charCodeAt(0)] = true;
  return t;
})();

/**
 * Header names that decide the request's framing or protocol. Any of them, other than one plain `content-length`,
 * `connection: keep-alive|close`, one `host` and a `content-type` that is not gRPC, sends the request to Node's
 * path: chunked bodies, upgrades (h2c included), `Expect: 100-continue`, `TE: trailers`, gRPC (whose local answers
 * are trailers).
 */
enum Framing {
  Host = 1,
  ContentLength,
  Connection,
  ContentType,
  Refer,
}
const FRAMING = new Map<string, Framing>([
  ['host', Framing.Host],
  ['content-length', Framing.ContentLength],
  ['connection', Framing.Connection],
  ['transfer-encoding', Framing.Refer],
  ['expect', Framing.Refer],
  ['upgrade', Framing.Refer],
  ['http2-settings', Framing.Refer],
  ['te', Framing.Refer],
  ['trailer', Framing.Refer],
  ['content-type', Framing.ContentType],
]);
const FRAMING_LENGTHS: readonly boolean[] = (() => {
  const lengths: boolean[] = [];
  for (const name of FRAMING.keys()) lengths[name.length] = true;
  return Array.from(lengths, (has) => has === true);
})();

/**
 * Longest Content-Length served lean, in digits (under 2^53, so the count is exact); longer ones, leading
 * signs, spaces inside or lists go to Node's parser, which refuses or accepts them as it always has.
 */
const MAX_LENGTH_DIGITS = 15;

const HTTP11 = Buffer.from(' HTTP/1.1\r\n', 'latin1');

/**
 * Reads the request head at `start` of `buf` (which holds `end` bytes). Returns the head when it is whole and
 * in the lean subset; undefined when it is incomplete, larger than `maxBytes`, has more than `maxHeaders`
 * fields, or is anything else: the caller hands such a connection to Node's server.
 */
export function readRequestHead(
  buf: Buffer,
  start: number,
  end: number,
  maxBytes: number,
  maxHeaders: number,
): LeanRequestHead | undefined {
  const limit = Math.min(end, start + maxBytes);
  let i = start;
  // Method: upper-case token, one space.
  while (i < limit && buf[i]! >= 0x41 && buf[i]! <= 0x5a) i++;
  if (i === start || i >= limit || buf[i] !== SP) return undefined;
  const method = buf.toString('latin1', start, i);
  if (!METHODS.has(method)) return undefined;
  const targetStart = ++i;
  if (buf[i] !== 0x2f /* / */) return undefined;
  while (i < limit && TARGET[buf[i]!] === true) i++;
  if (i + HTTP11.length > limit) return undefined;
  for (let k = 0; k < HTTP11.length; k++) if (buf[i + k] !== HTTP11[k]) return undefined;
  const url = buf.toString('latin1', targetStart, i);
  i += HTTP11.length;
  const rawHeaders: string[] = [];
  let hosts = 0;
  let lengths = 0;
  let bodyLength = 0;
  let close = false;
  for (;;) {
    if (i + 1 >= limit) return undefined;
    if (buf[i] === CR) {
      if (buf[i + 1] !== LF) return undefined;
      i += 2;
      break;
    }
    if (rawHeaders.length >= maxHeaders * 2) return undefined;
    const nameStart = i;
    while (i < limit && TOKEN[buf[i]!] === true) i++;
    if (i === nameStart || i >= limit || buf[i] !== COLON) return undefined;
    const nameEnd = i++;
    while (i < limit && (buf[i] === SP || buf[i] === HTAB)) i++;
    const valueStart = i;
    let valueEnd = i;
    for (;;) {
      if (i >= limit) return undefined;
      const c = buf[i]!;
      if (c === CR) break;
      if (c > 0x20 && c < 0x7f) valueEnd = i + 1;
      else if (c !== SP && c !== HTAB) return undefined;
      i++;
    }
    if (i + 1 >= limit || buf[i + 1] !== LF) return undefined;
    i += 2;
    const name = buf.toString('latin1', nameStart, nameEnd);
    const value = buf.toString('latin1', valueStart, valueEnd);
    if (FRAMING_LENGTHS[name.length] === true) {
      switch (FRAMING.get(name.toLowerCase())) {
        case Framing.Host:
          if (++hosts > 1) return undefined;
          break;
        case Framing.ContentLength:
          // A second Content-Length (which Node's parser refuses) or anything but plain digits: Node's path.
          if (++lengths > 1) return undefined;
          bodyLength = plainLength(value);
          if (bodyLength < 0) return undefined;
          break;
        case Framing.ContentType:
          if (value.length >= 16 && value.slice(0, 16).toLowerCase() === 'application/grpc') return undefined;
          break;
        case Framing.Connection: {
          const token = value.toLowerCase();
          if (token === 'close') close = true;
          else if (token !== 'keep-alive') return undefined;
          break;
        }
        case Framing.Refer:
          return undefined;
        default:
          break;
      }
    }
    rawHeaders.push(name, value);
  }
  // No Host in HTTP/1.1 is Node's to refuse (400, RFC 9112 §3.2).
  if (hosts === 0) return undefined;
  return { method, url, rawHeaders, close, length: i - start, bodyLength };
}

/** The value of a Content-Length of 1 to MAX_LENGTH_DIGITS ASCII digits; -1 for anything else. */
function plainLength(value: string): number {
  if (value.length === 0 || value.length > MAX_LENGTH_DIGITS) return -1;
  let n = 0;
  for (let k = 0; k < value.length; k++) {
    const d = value.charCodeAt(k) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}
