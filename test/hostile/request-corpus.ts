/**
 * Hostile requests and the exact answer the gateway gives each: a status and the short reason in the body
 * (empty reason: any body). Every case is sent on its own connection to a port whose only route forwards to a
 * healthy echo backend; none may reach it with a 2xx, none may get a 5xx.
 */
export interface RequestCase {
  readonly name: string;
  readonly bytes: string;
  readonly status: number;
  readonly reason: string;
  /** The gateway closes the connection after answering (default true). */
  readonly closes?: boolean;
}

const host = 'Host: example.com\r\n';
const manyHeaders = (n: number): string => Array.from({ length: n }, (_, i) => `x-h${i}: v\r\n`).join('');

export const REQUEST_CASES: readonly RequestCase[] = [
  {
    name: 'HTTP/2.0 in an HTTP/1 request line',
    bytes: `GET / HTTP/2.0\r\n${host}\r\n`,
    status: 505,
    reason: 'http version not supported',
  },
  {
    name: 'HTTP/3.0 in the request line',
    bytes: `GET / HTTP/3.0\r\n${host}\r\n`,
    status: 505,
    reason: 'http version not supported',
  },
  {
    name: 'HTTP/1.2 in the request line',
    bytes: `GET / HTTP/1.2\r\n${host}\r\n`,
    status: 505,
    reason: 'http version not supported',
  },
  {
    name: 'two Host headers',
    bytes: `GET / HTTP/1.1\r\n${host}Host: evil.example\r\n\r\n`,
    status: 400,
    reason: 'duplicate host header',
  },
  {
    name: 'two Host headers, same value',
    bytes: `GET / HTTP/1.1\r\n${host}${host}\r\n`,
    status: 400,
    reason: 'duplicate host header',
  },
  {
    name: '1,001 request headers',
    bytes: `GET / HTTP/1.1\r\n${host}${manyHeaders(1000)}\r\n`,
    status: 400,
    reason: 'too many headers',
  },
  {
    name: '101 request headers (limit 100)',
    bytes: `GET / HTTP/1.1\r\n${host}${manyHeaders(100)}\r\n`,
    status: 400,
    reason: 'too many headers',
  },
  {
    name: 'a 20 KiB header',
    bytes: `GET / HTTP/1.1\r\n${host}x-big: ${'a'.repeat(20_480)}\r\n\r\n`,
    status: 431,
    reason: 'request header fields too large',
  },
  {
    name: 'a 20 KiB request target',
    bytes: `GET /${'a'.repeat(20_480)} HTTP/1.1\r\n${host}\r\n`,
    status: 431,
    reason: 'request header fields too large',
  },
  {
    name: 'a method with a control character',
    bytes: `G\x01T / HTTP/1.1\r\n${host}\r\n`,
    status: 400,
    reason: '',
  },
  {
    name: 'CR without LF inside a header value',
    bytes: `GET / HTTP/1.1\r\n${host}x-a: b\rc\r\n\r\n`,
    status: 400,
    reason: '',
  },
  {
    name: 'NUL in a header value',
    bytes: `GET / HTTP/1.1\r\n${host}x-a: b\x00c\r\n\r\n`,
    status: 400,
    reason: '',
  },
  {
    name: 'space before the header colon',
    bytes: `GET / HTTP/1.1\r\n${host}x-a : b\r\n\r\n`,
    status: 400,
    reason: '',
  },
  {
    name: 'header line folding (obs-fold)',
    bytes: `GET / HTTP/1.1\r\n${host}x-a: b\r\n c\r\n\r\n`,
    status: 400,
    reason: '',
  },
  {
    name: 'Content-Length and Transfer-Encoding together',
    bytes: `POST / HTTP/1.1\r\n${host}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    status: 400,
    reason: '',
  },
  {
    name: 'two different Content-Lengths',
    bytes: `POST / HTTP/1.1\r\n${host}Content-Length: 1\r\nContent-Length: 2\r\n\r\nab`,
    status: 400,
    reason: '',
  },
  {
    name: 'a negative Content-Length',
    bytes: `POST / HTTP/1.1\r\n${host}Content-Length: -1\r\n\r\n`,
    status: 400,
    reason: '',
  },
  {
    name: 'an unknown Transfer-Encoding',
    bytes: `POST / HTTP/1.1\r\n${host}Transfer-Encoding: gzip\r\n\r\n`,
    status: 400,
    reason: 'unsupported transfer-encoding',
  },
  {
    name: 'chunked, then gzip',
    bytes: `POST / HTTP/1.1\r\n${host}Transfer-Encoding: chunked, gzip\r\n\r\n`,
    status: 400,
    reason: '',
  },
  // Body framing breaks after a good head, while the request is on its way upstream: no response has
  // started, so the client still gets its 400 (and the connection closes).
  {
    name: 'a bad chunk size after a good head',
    bytes: `POST / HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\n\r\nzz\r\n`,
    status: 400,
    reason: 'invalid message framing',
  },
  {
    name: 'a chunk-size line ending in a bare LF',
    bytes: `POST / HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n`,
    status: 400,
    reason: 'invalid message framing',
  },
  {
    name: 'a chunk extension ending in a bare LF',
    bytes: `POST / HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\n\r\n5;a=b\nhello\r\n0\r\n\r\n`,
    status: 400,
    reason: 'invalid message framing',
  },
  {
    name: 'a chunk size overflowing 64 bits',
    bytes: `POST / HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\n\r\n1FFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n`,
    status: 400,
    reason: 'invalid message framing',
  },
  {
    name: 'chunk data longer than its size',
    bytes: `POST / HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\n\r\n2\r\nhello\r\n0\r\n\r\n`,
    status: 400,
    reason: 'invalid message framing',
  },
  {
    name: 'bare-LF line endings throughout',
    bytes: 'GET / HTTP/1.1\nHost: example.com\n\n',
    status: 400,
    reason: 'invalid message framing',
  },
  {
    name: 'a bare LF after the headers',
    bytes: `GET / HTTP/1.1\r\n${host}x-a: b\n\r\n`,
    status: 400,
    reason: '',
  },
  {
    name: 'a bare CR after the request line',
    bytes: `GET / HTTP/1.1\r${host}\r\n`,
    status: 400,
    reason: '',
  },
  {
    name: 'a three-digit minor version',
    bytes: `GET / HTTP/1.100\r\n${host}\r\n`,
    status: 400,
    reason: 'invalid message framing',
  },
  {
    name: 'garbage instead of a request line',
    bytes: '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n',
    status: 400,
    reason: '',
  },
  { name: 'no Host header in HTTP/1.1', bytes: 'GET / HTTP/1.1\r\n\r\n', status: 400, reason: '' },
  {
    name: 'an absolute-form target with a bad authority',
    bytes: `GET http://[::1 HTTP/1.1\r\n${host}\r\n`,
    status: 400,
    reason: 'bad request',
    closes: false,
  },
  {
    name: 'a request target without a slash',
    bytes: `GET foo HTTP/1.1\r\n${host}\r\n`,
    status: 400,
    reason: '',
  },
];
