import { describe, expect, it } from 'vitest';
import { readRequestHead } from '../../src/proxy/listen/http1-request-head.ts';

function read(text: string, maxBytes = 16_384, maxHeaders = 100) {
  const buf = Buffer.from(text, 'latin1');
  return readRequestHead(buf, 0, buf.length, maxBytes, maxHeaders);
}

const h = 'Host: a.example\r\n';

describe('readRequestHead (the lean path takes only plain HTTP/1.1 heads)', () => {
  it('reads method, target, headers (values trimmed, names as sent) and the head length', () => {
    const text = `GET /p?q=%20 HTTP/1.1\r\n${h}X-Two:  a b \t\r\nAccept:*/*\r\n\r\nGET /next`;
    const head = read(text);
    expect(head).toEqual({
      method: 'GET',
      url: '/p?q=%20',
      rawHeaders: ['Host', 'a.example', 'X-Two', 'a b', 'Accept', '*/*'],
      close: false,
      length: text.indexOf('GET /next'),
      bodyLength: 0,
    });
  });

  it('reads the length of a body framed by one plain Content-Length', () => {
    expect(read(`POST / HTTP/1.1\r\n${h}Content-Length: 3\r\n\r\nabc`)?.bodyLength).toBe(3);
    expect(
      read(`PUT / HTTP/1.1\r\n${h}content-length: 1048576\r\nContent-Type: text/plain\r\n\r\n`)?.bodyLength,
    ).toBe(1_048_576);
    expect(read(`POST / HTTP/1.1\r\n${h}Content-Length: 999999999999999\r\n\r\n`)?.bodyLength).toBe(
      999_999_999_999_999,
    );
  });

  it('reads a head that starts inside the buffer (pipelined requests)', () => {
    const first = `GET /1 HTTP/1.1\r\n${h}\r\n`;
    const buf = Buffer.from(`${first}HEAD /2 HTTP/1.1\r\n${h}Connection: close\r\n\r\n`, 'latin1');
    const head = readRequestHead(buf, first.length, buf.length, 16_384, 100);
    expect(head?.method).toBe('HEAD');
    expect(head?.close).toBe(true);
    expect(first.length + (head?.length ?? 0)).toBe(buf.length);
  });

  it.each([
    ['Content-Length: 0', `POST / HTTP/1.1\r\n${h}Content-Length: 0\r\n\r\n`],
    ['Connection: keep-alive', `GET / HTTP/1.1\r\n${h}Connection: keep-alive\r\n\r\n`],
    ['an empty value', `GET / HTTP/1.1\r\n${h}X-Empty:\r\n\r\n`],
  ])('takes %s', (_, text) => {
    expect(read(text)).toBeDefined();
  });

  // Each of these goes to Node's server, whose parser and the listener's guard answer it as before.
  it.each([
    ['an incomplete head', `GET / HTTP/1.1\r\n${h}`],
    ['no Host', 'GET / HTTP/1.1\r\n\r\n'],
    ['two Hosts', `GET / HTTP/1.1\r\n${h}${h}\r\n`],
    ['HTTP/1.0', `GET / HTTP/1.0\r\n${h}\r\n`],
    ['HTTP/2.0', `GET / HTTP/2.0\r\n${h}\r\n`],
    ['a Content-Length with a sign', `POST / HTTP/1.1\r\n${h}Content-Length: +3\r\n\r\nabc`],
    ['a Content-Length list', `POST / HTTP/1.1\r\n${h}Content-Length: 3, 3\r\n\r\nabc`],
    ['a Content-Length of 16 digits', `POST / HTTP/1.1\r\n${h}Content-Length: 1000000000000000\r\n\r\n`],
    ['an empty Content-Length', `POST / HTTP/1.1\r\n${h}Content-Length:\r\n\r\n`],
    [
      'gRPC with a codec',
      `POST / HTTP/1.1\r\n${h}Content-Type: Application/GRPC+proto\r\nContent-Length: 0\r\n\r\n`,
    ],
    ['two Content-Length: 0', `POST / HTTP/1.1\r\n${h}Content-Length: 0\r\nContent-Length: 0\r\n\r\n`],
    ['chunked', `POST / HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n`],
    ['Expect', `PUT / HTTP/1.1\r\n${h}Expect: 100-continue\r\n\r\n`],
    ['Upgrade', `GET / HTTP/1.1\r\n${h}Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n`],
    ['h2c', `GET / HTTP/1.1\r\n${h}Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n`],
    ['TE: trailers', `GET / HTTP/1.1\r\n${h}TE: trailers\r\n\r\n`],
    ['gRPC', `GET / HTTP/1.1\r\n${h}Content-Type: application/grpc\r\n\r\n`],
    ['CONNECT', `CONNECT a.example:443 HTTP/1.1\r\n${h}\r\n`],
    ['a lower-case method', `get / HTTP/1.1\r\n${h}\r\n`],
    ['an absolute-form target', `GET http://a.example/ HTTP/1.1\r\n${h}\r\n`],
    ['an asterisk target', `OPTIONS * HTTP/1.1\r\n${h}\r\n`],
    ['a fragment', `GET /a#b HTTP/1.1\r\n${h}\r\n`],
    ['two spaces', `GET  / HTTP/1.1\r\n${h}\r\n`],
    ['a bare LF after the request line', `GET / HTTP/1.1\n${h}\r\n`],
    ['a bare LF after a header', `GET / HTTP/1.1\r\nHost: a.example\n\r\n`],
    ['a bare CR in a value', `GET / HTTP/1.1\r\n${h}X: a\rb\r\n\r\n`],
    ['a space before the colon', `GET / HTTP/1.1\r\n${h}X-A : b\r\n\r\n`],
    ['obs-fold', `GET / HTTP/1.1\r\n${h}X-A: b\r\n c\r\n\r\n`],
    ['a NUL in a value', `GET / HTTP/1.1\r\n${h}X-A: b\0c\r\n\r\n`],
    ['obs-text in a value', `GET / HTTP/1.1\r\n${h}X-A: caf\xe9\r\n\r\n`],
    ['a non-token name', `GET / HTTP/1.1\r\n${h}X(A): b\r\n\r\n`],
    ['Connection listing a header', `GET / HTTP/1.1\r\n${h}Connection: x-a\r\n\r\n`],
  ])('leaves %s to Node', (_, text) => {
    expect(read(text)).toBeUndefined();
  });

  it('leaves a head over the size or field-count limit to Node (which answers 431 or 400)', () => {
    const text = `GET / HTTP/1.1\r\n${h}X-A: ${'a'.repeat(100)}\r\n\r\n`;
    expect(read(text)).toBeDefined();
    expect(read(text, 64)).toBeUndefined();
    const many = `GET / HTTP/1.1\r\n${h}${'X: 1\r\n'.repeat(3)}\r\n`;
    expect(read(many, 16_384, 4)).toBeDefined();
    expect(read(many, 16_384, 3)).toBeUndefined();
  });
});
