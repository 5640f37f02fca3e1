import { describe, expect, it } from 'vitest';
import { Http1ResponseParser } from '../../src/proxy/upstream/http1-response-parser.ts';
import { nativeHttpParser } from '../support/native-http-parser.ts';

/**
 * Issue 31: the upstream client's own response parser, fed bytes as a socket would (whole, or split at every
 * position), against what Node's llhttp binding makes of the same bytes where Node exposes it.
 */
type Parser = InstanceType<NonNullable<typeof nativeHttpParser>>;
type ParserClass = NonNullable<typeof nativeHttpParser>;

interface Seen {
  events: string[];
  error?: string;
}

/** Runs `reads` through a parser; `skipBody` answers headers-complete as the client does for a HEAD request. */
function parse(
  Class: ParserClass,
  reads: readonly Buffer[],
  options: { skipBody?: boolean; end?: boolean } = {},
) {
  const seen: Seen = { events: [] };
  const parser = new Class() as Parser;
  parser.initialize(Class.RESPONSE, {}, 0, Class.kLenientNone);
  let body = '';
  const flushBody = () => {
    if (body !== '') seen.events.push(`body ${body}`);
    body = '';
  };
  parser[Class.kOnHeaders] = (headers: string[]) => {
    flushBody();
    seen.events.push(`trailers ${JSON.stringify(headers)}`);
  };
  parser[Class.kOnHeadersComplete] = (
    _major: number,
    minor: number,
    headers: string[],
    _method: unknown,
    _url: unknown,
    status: number,
    _message: string,
    upgrade: boolean,
    keepAlive: boolean,
  ) => {
    seen.events.push(
      `head 1.${minor} ${status} ${JSON.stringify(headers)} upgrade=${upgrade} keepAlive=${keepAlive}`,
    );
    return options.skipBody ? 1 : 0;
  };
  parser[Class.kOnBody] = (chunk: Buffer) => {
    body += chunk.toString('latin1');
  };
  parser[Class.kOnMessageComplete] = () => {
    flushBody();
    seen.events.push('complete');
  };
  for (const read of reads) {
    // A shared read buffer, overwritten after each read as the client's is: nothing may keep a view of it.
    const shared = Buffer.from(read);
    const result = parser.execute(shared);
    shared.fill(0x5a);
    if (result instanceof Error) {
      flushBody();
      seen.error = (result as Error & { code: string }).code;
      return seen;
    }
  }
  if (options.end) {
    const result = parser.finish();
    flushBody();
    if (result instanceof Error) seen.error = (result as Error & { code: string }).code;
  }
  flushBody();
  return seen;
}

/** Every way to cut `text` in two reads, and one byte per read. */
function splits(text: string): Buffer[][] {
  const bytes = Buffer.from(text, 'latin1');
  const ways: Buffer[][] = [[bytes]];
  for (let i = 1; i < bytes.length; i++) ways.push([bytes.subarray(0, i), bytes.subarray(i)]);
  ways.push(Array.from(bytes, (b) => Buffer.from([b])));
  return ways;
}

const GOOD: readonly [string, string, { skipBody?: boolean; end?: boolean }?][] = [
  [
    'a Content-Length body',
    'HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello',
  ],
  [
    'an empty reason phrase and OWS around values',
    'HTTP/1.1 404 \r\nx-a:  spaced \t\r\ncontent-length: 0\r\n\r\n',
  ],
  ['no reason phrase at all', 'HTTP/1.1 204\r\nx-a: 1\r\n\r\n'],
  [
    'a chunked body with an extension and trailers',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3;name=value\r\nabc\r\nA\r\n0123456789\r\n0\r\nx-checksum: 42\r\n\r\n',
  ],
  [
    'interim answers, then the final one',
    'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok',
  ],
  [
    'two responses in a row',
    'HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\naHTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nb',
  ],
  ['a body to the end of the connection', 'HTTP/1.1 200 OK\r\nx: y\r\n\r\nuntil the end', { end: true }],
  ['HTTP/1.0 without keep-alive', 'HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok'],
  ['HTTP/1.0 with keep-alive', 'HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 2\r\n\r\nok'],
  ['connection: close', 'HTTP/1.1 200 OK\r\nConnection: close\r\ncontent-length: 2\r\n\r\nok'],
  ['a HEAD response announcing a body', 'HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n', { skipBody: true }],
  ['304 with a length', 'HTTP/1.1 304 Not Modified\r\ncontent-length: 50\r\n\r\n'],
  ['obs-text in a value', 'HTTP/1.1 200 OK\r\nx-latin: caf\xe9\r\ncontent-length: 0\r\n\r\n'],
  [
    'chunked not the last coding: to the end',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked, gzip\r\n\r\nraw',
    { end: true },
  ],
];

const REFUSED: readonly [string, string][] = [
  ['two Content-Lengths', 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nok!'],
  ['two equal Content-Lengths', 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 2\r\n\r\nok'],
  ['a Content-Length list', 'HTTP/1.1 200 OK\r\ncontent-length: 2, 2\r\n\r\nok'],
  ['a signed Content-Length', 'HTTP/1.1 200 OK\r\ncontent-length: +2\r\n\r\nok'],
  [
    'Content-Length with Transfer-Encoding',
    'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n',
  ],
  ['bare LF line endings', 'HTTP/1.1 200 OK\ncontent-length: 2\n\nok'],
  ['a bare LF inside the head', 'HTTP/1.1 200 OK\r\nx-a: 1\nx-b: 2\r\ncontent-length: 2\r\n\r\nok'],
  ['a bare CR inside a value', 'HTTP/1.1 200 OK\r\nx-a: 1\rx-b: 2\r\ncontent-length: 2\r\n\r\nok'],
  ['an obs-fold continuation line', 'HTTP/1.1 200 OK\r\nx-folded: a\r\n b\r\ncontent-length: 2\r\n\r\nok'],
  ['a space before the colon', 'HTTP/1.1 200 OK\r\ncontent-length : 2\r\n\r\nok'],
  ['a control character in a name', 'HTTP/1.1 200 OK\r\nx-bad\x01: 1\r\n\r\n'],
  ['a control character in a value', 'HTTP/1.1 200 OK\r\nx-bad: a\x00b\r\n\r\n'],
  ['an empty field name', 'HTTP/1.1 200 OK\r\n: nameless\r\ncontent-length: 0\r\n\r\n'],
  ['a line without a colon', 'HTTP/1.1 200 OK\r\nno colon here\r\n\r\n'],
  ['not HTTP', 'NOT HTTP\r\n\r\n'],
  ['an unknown version', 'HTTP/1.2 200 OK\r\ncontent-length: 0\r\n\r\n'],
  ['a two-digit status', 'HTTP/1.1 20 OK\r\ncontent-length: 0\r\n\r\n'],
  [
    'a chunk size that is not hex',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\nzz\r\nno\r\n0\r\n\r\n',
  ],
  [
    'a chunk longer than its size',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nokk\r\n0\r\n\r\n',
  ],
  [
    'a chunk size line ended by a bare LF',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\nok\r\n0\r\n\r\n',
  ],
  [
    'a chunk size too large to be a number',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nffffffffffffffffff\r\n',
  ],
  [
    'bytes after a response that closes the connection',
    'HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 1\r\n\r\naHTTP/1.1 200 OK\r\n\r\n',
  ],
];

describe('http1-response-parser', () => {
  for (const [name, text, options] of GOOD) {
    it(`parses ${name} the same whatever the reads`, () => {
      const whole = parse(Http1ResponseParser, [Buffer.from(text, 'latin1')], options);
      expect(whole.error).toBeUndefined();
      expect(whole.events).toContain('complete');
      for (const reads of splits(text)) expect(parse(Http1ResponseParser, reads, options)).toEqual(whole);
      if (nativeHttpParser !== undefined) {
        expect(parse(nativeHttpParser, [Buffer.from(text, 'latin1')], options).error).toBeUndefined();
      }
    });
  }

  for (const [name, text] of REFUSED) {
    it(`refuses ${name} with an HPE_ code, whatever the reads`, () => {
      for (const reads of splits(text)) {
        expect(parse(Http1ResponseParser, reads).error, name).toMatch(/^HPE_/);
      }
      if (nativeHttpParser !== undefined) {
        expect(parse(nativeHttpParser, [Buffer.from(text, 'latin1')]).error, `llhttp: ${name}`).toMatch(
          /^HPE_/,
        );
      }
    });
  }

  it('reports the fields, status and keep-alive of a response as Node parses them', () => {
    const text =
      'HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nhello';
    const own = parse(Http1ResponseParser, [Buffer.from(text)]);
    expect(own.events).toEqual([
      'head 1.1 200 ["Server","nginx","Content-Type","text/plain","Content-Length","5","Connection","keep-alive"] upgrade=false keepAlive=true',
      'body hello',
      'complete',
    ]);
    if (nativeHttpParser !== undefined) expect(parse(nativeHttpParser, [Buffer.from(text)])).toEqual(own);
    expect(
      parse(Http1ResponseParser, [Buffer.from('HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n')]).events[0],
    ).toContain('keepAlive=false');
  });

  it('refuses a head over Node’s header size limit, even one that never ends', () => {
    const big = Buffer.from(`HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(1024 * 1024)}`);
    expect(parse(Http1ResponseParser, [big]).error).toBe('HPE_HEADER_OVERFLOW');
    const many = Array.from({ length: 1000 }, (_, i) => Buffer.from(`x-h${i}: ${'v'.repeat(20)}\r\n`));
    expect(parse(Http1ResponseParser, [Buffer.from('HTTP/1.1 200 OK\r\n'), ...many]).error).toBe(
      'HPE_HEADER_OVERFLOW',
    );
    const trailers = Array.from({ length: 1000 }, (_, i) => Buffer.from(`x-t${i}: ${'v'.repeat(20)}\r\n`));
    const chunked = Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n');
    expect(parse(Http1ResponseParser, [chunked, ...trailers]).error).toBe('HPE_HEADER_OVERFLOW');
  });

  it('a message cut by the end of the connection is an error; one at a message boundary is not', () => {
    const cut = [
      'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly this',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n10\r\nhalf',
      'HTTP/1.1 200 OK\r\ncontent-le',
    ];
    for (const text of cut) {
      expect(parse(Http1ResponseParser, [Buffer.from(text)], { end: true }).error, text).toBe(
        'HPE_INVALID_EOF_STATE',
      );
    }
    const whole = parse(
      Http1ResponseParser,
      [Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok')],
      {
        end: true,
      },
    );
    expect(whole.error).toBeUndefined();
  });

  it('a switch of protocols ends the parse: what follows is not HTTP', () => {
    const seen = parse(Http1ResponseParser, [
      Buffer.from('HTTP/1.1 101 Switching Protocols\r\nupgrade: x\r\n\r\n\x00\x01binary'),
    ]);
    expect(seen.error).toBeUndefined();
    expect(seen.events[0]).toContain('upgrade=true');
  });
});
