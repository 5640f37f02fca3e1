import type { IncomingHttpHeaders } from 'node:http';

/**
 * A request's header block on the js HTTP/2 codec checked as RFC 9113 §8.1-8.3 (and nghttp2, which node:http2
 * runs) require, then turned into the header object the request path reads (node:http2's form: names as sent,
 * which are lower-case, pseudo-headers included, repeated names joined as Node joins them). Pure.
 */

/** The header object, or the reason the block is malformed (the stream is reset with PROTOCOL_ERROR). */
export type CheckedRequestFields =
  | { readonly ok: true; readonly headers: IncomingHttpHeaders; readonly contentLength: number }
  | { readonly ok: false; readonly reason: string };

/** Node keeps the first of these when repeated (internal/http2/util.js kSingleValueHeaders). */
const SINGLE_VALUE = new Set([
  ':status',
  ':method',
  ':authority',
  ':scheme',
  ':path',
  ':protocol',
  'access-control-allow-credentials',
  'access-control-max-age',
  'access-control-request-method',
  'age',
  'authorization',
  'content-encoding',
  'content-language',
  'content-length',
  'content-location',
  'content-md5',
  'content-range',
  'content-type',
  'date',
  'dnt',
  'etag',
  'expires',
  'from',
  'host',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-range',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'range',
  'referer',
  'retry-after',
  'tk',
  'upgrade-insecure-requests',
  'user-agent',
  'x-content-type-options',
]);

/** Connection-specific fields no HTTP/2 message may carry (§8.2.2); `te` is checked on its own. */
const CONNECTION_SPECIFIC = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

/** tchar of RFC 9110 §5.6.2 without upper-case letters (§8.2.1), by char code. */
const NAME_CHAR: readonly boolean[] = (() => {
  const ok: boolean[] = [];
  for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz") ok[c.charCodeAt(0)] = true;
  return Array.from({ length: 128 }, (_, i) => ok[i] === true);
})();

/** Names already found valid: most requests carry the same few, so each is scanned once. */
const VALID_NAMES = new Set<string>();
const VALID_NAMES_MAX = 1024;

function validName(name: string): boolean {
  if (VALID_NAMES.has(name)) return true;
  if (name.length === 0) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 128 || !NAME_CHAR[c]) return false;
  }
  if (VALID_NAMES.size < VALID_NAMES_MAX) VALID_NAMES.add(name);
  return true;
}

/**
 * The header object's constructor: its objects inherit nothing (no `constructor`, `toString`, `__proto__`
 * accessor: a field of any name is an own property), as a null-prototype object's, but take V8's fast
 * properties: a dictionary-mode `Object.create(null)` object holding a gRPC call's ten fields is about 370
 * bytes larger.
 */
const HeaderObject = function HeaderObject() {} as unknown as new () => IncomingHttpHeaders;
HeaderObject.prototype = Object.create(null);

/** Content-Length's digits (1 to 15 of them) as a number; -1 for anything else. */
function parseLength(value: string): number {
  if (value.length === 0 || value.length > 15) return -1;
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const d = value.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** §8.2.1: no NUL, CR or LF in a value (nghttp2 also refuses them). */
function validValue(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0 || c === 10 || c === 13) return false;
  }
  return true;
}

function fail(reason: string): CheckedRequestFields {
  return { ok: false, reason };
}

/**
 * Checks a request's fields (flat, wire order). `extendedConnect`: the server sent
 * SETTINGS_ENABLE_CONNECT_PROTOCOL, so `:protocol` is allowed (RFC 8441).
 * `contentLength` is -1 when the request has none.
 */
export function checkRequestFields(fields: readonly string[], extendedConnect = false): CheckedRequestFields {
  const headers = new HeaderObject();
  let regular = false;
  let contentLength = -1;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i]!;
    const value = fields[i + 1]!;
    if (!validValue(value)) return fail(`invalid value of ${name}`);
    if (name.charCodeAt(0) === 58 /* : */) {
      if (regular) return fail('a pseudo-header after a regular field');
      if (
        name !== ':method' &&
        name !== ':scheme' &&
        name !== ':authority' &&
        name !== ':path' &&
        !(name === ':protocol' && extendedConnect)
      ) {
        return fail(`pseudo-header ${name} in a request`);
      }
      if (headers[name] !== undefined) return fail(`repeated ${name}`);
      headers[name] = value;
      continue;
    }
    regular = true;
    if (!validName(name)) return fail('invalid field name');
    if (CONNECTION_SPECIFIC.has(name)) return fail(`connection-specific field ${name}`);
    if (name === 'te' && value.toLowerCase() !== 'trailers') return fail('te other than trailers');
    if (name === 'content-length') {
      const length = parseLength(value);
      if (length === -1) return fail('invalid content-length');
      if (contentLength !== -1 && contentLength !== length) return fail('conflicting content-length');
      contentLength = length;
    }
    const seen = headers[name];
    if (seen === undefined) {
      headers[name] = name === 'set-cookie' ? [value] : value;
    } else if (!SINGLE_VALUE.has(name)) {
      if (name === 'set-cookie') (seen as string[]).push(value);
      else headers[name] = `${seen as string}${name === 'cookie' ? '; ' : ', '}${value}`;
    }
  }
  const method = headers[':method'] as string | undefined;
  if (method === undefined || method === '') return fail('no :method');
  const path = headers[':path'] as string | undefined;
  if (method === 'CONNECT' && headers[':protocol'] === undefined) {
    if (headers[':scheme'] !== undefined || path !== undefined) return fail('CONNECT with :scheme or :path');
    if (headers[':authority'] === undefined) return fail('CONNECT without :authority');
  } else {
    if (headers[':scheme'] === undefined) return fail('no :scheme');
    if (path === undefined || path === '') return fail('no :path');
    if (path.charCodeAt(0) !== 47 /* / */ && !(path === '*' && method === 'OPTIONS')) {
      return fail('a :path neither absolute nor OPTIONS *');
    }
  }
  return { ok: true, headers, contentLength };
}
