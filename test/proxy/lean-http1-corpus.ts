import { createServer, type Server } from 'node:http';

// Requests and a backend shared by the lean path's comparison tests (plaintext and TLS).

/** A backend whose answers depend only on the request: what it saw, framed as the path asks. */
export function startBackend(): Promise<Server> {
  const server = createServer((req, res) => {
    const seen = JSON.stringify({
      method: req.method,
      url: req.url,
      host: req.headers.host,
      forwardedFor: req.headers['x-forwarded-for'],
      forwardedProto: req.headers['x-forwarded-proto'],
      names: req.rawHeaders.filter((_, i) => i % 2 === 0),
    });
    req.resume();
    req.on('end', () => {
      if (req.url?.startsWith('/chunked')) {
        res.writeHead(200, { 'content-type': 'text/plain', date: 'Thu, 01 Jan 2026 00:00:00 GMT' });
        res.write('first;');
        setImmediate(() => res.end(seen));
      } else if (req.url?.startsWith('/empty')) {
        res.writeHead(204, { date: 'Thu, 01 Jan 2026 00:00:00 GMT' });
        res.end();
      } else if (req.url?.startsWith('/big')) {
        res.writeHead(200, { 'content-length': 262_144, date: 'Thu, 01 Jan 2026 00:00:00 GMT' });
        res.end(Buffer.alloc(262_144, 'x'));
      } else {
        res.writeHead(200, { 'content-type': 'application/json', date: 'Thu, 01 Jan 2026 00:00:00 GMT' });
        res.end(seen);
      }
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

export const h = 'Host: example.com\r\n';
/** Requests the lean path serves itself, and requests it hands to Node's server; the answers must not differ. */
export const GOOD: readonly (string | string[])[] = [
  `GET / HTTP/1.1\r\n${h}\r\n`,
  `GET /path?q=1&b=%20x HTTP/1.1\r\n${h}User-Agent: t\r\nAccept: */*\r\nX-Forwarded-For: 10.0.0.1\r\n\r\n`,
  `HEAD / HTTP/1.1\r\n${h}\r\n`,
  `HEAD /chunked HTTP/1.1\r\n${h}\r\n`,
  `GET /chunked HTTP/1.1\r\n${h}\r\n`,
  `GET /empty HTTP/1.1\r\n${h}\r\n`,
  `GET /big HTTP/1.1\r\n${h}\r\n`,
  `DELETE /invalid HTTP/1.1\r\n${h}Content-Length: 0\r\n\r\n`,
  `GET /a/../b/./c HTTP/1.1\r\n${h}\r\n`,
  `GET / HTTP/1.1\r\n${h}Connection: close\r\n\r\n`,
  `GET / HTTP/1.1\r\nHost: other.example\r\n\r\n`,
  `OPTIONS / HTTP/1.1\r\n${h}\r\n`,
  // Pipelined: lean, lean, then a body (Node's server), then lean again on Node's side.
  `GET /1 HTTP/1.1\r\n${h}\r\nGET /2 HTTP/1.1\r\n${h}\r\nPOST /3 HTTP/1.1\r\n${h}Content-Length: 3\r\n\r\nabcGET /4 HTTP/1.1\r\n${h}Connection: close\r\n\r\n`,
  // A head split across two writes, and a body that follows its head in another write.
  [`GET /split HTTP/1.1\r\nHo`, `st: example.com\r\n\r\n`],
  [`PUT /up HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\n`, '3\r\nabc\r\n0\r\n\r\n'],
  `GET / HTTP/1.0\r\n${h}\r\n`,
  `GET / HTTP/1.1\r\n${h}Expect: 100-continue\r\n\r\n`,
  `GET / HTTP/1.1\r\n${h}X-Latin: caf\xe9\r\n\r\n`,
  `GET /{braces} HTTP/1.1\r\n${h}\r\n`,
  `GET / HTTP/1.1\r\n${h}Cookie: a=1\r\nCookie: b=2\r\n\r\n`,
];

/** The answers with Date values blanked (each proxy writes its own clock's). */
export function comparable(raw: string): string {
  return raw.replace(/^(date: ).*$/gim, '$1-');
}
