import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawExchange } from '../hostile/raw-client.ts';
import { backend, entry, simpleTable, startProxy, type TestProxy, to } from './fixtures.ts';

/** Every byte value, repeated to `size` bytes: a body that a text encoding anywhere on the way would change. */
function binary(size: number): Buffer {
  const body = Buffer.alloc(size);
  for (let i = 0; i < size; i++) body[i] = (i * 7 + 3) & 0xff;
  return body;
}

/**
 * `/fixed/N`: N binary bytes with a Content-Length. `/chunks/A,B,...`: chunked, one chunk of each size per tick
 * of the backend's event loop, so the proxy relays them in separate reads.
 */
function startBackend(): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume();
    const [, kind, sizes = ''] = (req.url ?? '').split('/');
    const date = 'Thu, 01 Jan 2026 00:00:00 GMT';
    if (kind === 'fixed') {
      const body = binary(Number(sizes));
      res.writeHead(200, { 'content-length': body.length, date });
      res.end(body);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', date });
    const chunks = sizes.split(',').map(Number);
    const next = (i: number): void => {
      if (i === chunks.length) {
        res.end();
        return;
      }
      res.write(binary(chunks[i]!));
      setImmediate(next, i + 1);
    };
    next(0);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function comparable(raw: string): string {
  return raw.replace(/^(date: ).*$/gim, '$1-');
}

const h = 'Host: example.com\r\n';

describe('lean HTTP/1.1 answers: small writes leave together, every byte as the backend sent it', () => {
  let upstream: Server;
  let lean: TestProxy;
  let node: TestProxy;

  beforeAll(async () => {
    upstream = await startBackend();
    const good = backend('good', [(upstream.address() as { port: number }).port]);
    const table = simpleTable([entry([to(good)])], [good]);
    lean = await startProxy(table, undefined, { leanHttp1: true });
    node = await startProxy(table, undefined, { leanHttp1: false });
  });
  afterAll(async () => {
    await Promise.all([lean.close(), node.close()]);
    await new Promise((r) => upstream.close(r));
  });

  // Sizes below, at and above the coalescing limit (4 KiB for the whole answer), fixed and chunked.
  const paths = [
    '/fixed/0',
    '/fixed/1',
    '/fixed/256',
    '/fixed/3900',
    '/fixed/4096',
    '/fixed/70000',
    '/chunks/1,255,3000',
    '/chunks/4000,4000,100',
    '/chunks/65536,1,20000',
  ];

  it.each(paths)('relays %s byte for byte, as Node’s server does', async (path) => {
    const bytes = `GET ${path} HTTP/1.1\r\n${h}\r\n`;
    const [a, b] = await Promise.all([
      rawExchange(lean.port(), bytes, { idleMs: 500 }),
      rawExchange(node.port(), bytes, { idleMs: 500 }),
    ]);
    expect(a.status).toBe(200);
    expect(comparable(a.raw)).toBe(comparable(b.raw));
    const [, kind, sizes = ''] = path.split('/');
    if (kind === 'fixed') expect(Buffer.from(a.body, 'latin1').equals(binary(Number(sizes)))).toBe(true);
  });

  it('answers pipelined requests in order on one connection, each whole', async () => {
    const bytes = ['/fixed/10', '/chunks/5,6000', '/fixed/300', '/fixed/0']
      .map((path) => `GET ${path} HTTP/1.1\r\n${h}\r\n`)
      .join('');
    const [a, b] = await Promise.all([
      rawExchange(lean.port(), bytes, { idleMs: 500 }),
      rawExchange(node.port(), bytes, { idleMs: 500 }),
    ]);
    expect(a.raw.match(/HTTP\/1\.1 200 OK\r\n/g)).toHaveLength(4);
    expect(comparable(a.raw)).toBe(comparable(b.raw));
  });

  // Answers are held to the end of the event loop's poll phase and written together (src/net/end-of-poll.ts): many
  // connections answered in one phase must each get their own answers, whole and in order.
  it('answers many connections at once, each its pipelined requests whole and in order', async () => {
    const requests = Array.from({ length: 24 }, (_, i) =>
      [`/fixed/${i}`, `/fixed/${4096 - i}`, `/chunks/${i + 1},7`, `/fixed/${i * 3}`]
        .map((path) => `GET ${path} HTTP/1.1\r\n${h}\r\n`)
        .join(''),
    );
    const [leanAnswers, nodeAnswers] = await Promise.all([
      Promise.all(requests.map((bytes) => rawExchange(lean.port(), bytes, { idleMs: 1500 }))),
      Promise.all(requests.map((bytes) => rawExchange(node.port(), bytes, { idleMs: 1500 }))),
    ]);
    for (let i = 0; i < requests.length; i++) {
      expect(leanAnswers[i]!.raw.match(/HTTP\/1\.1 200 OK\r\n/g)).toHaveLength(4);
      expect(comparable(leanAnswers[i]!.raw)).toBe(comparable(nodeAnswers[i]!.raw));
    }
  });
});
