import { describe, expect, it } from 'vitest';
import { checkRequestFields } from '../../src/proxy/listen/http2-request-fields.ts';

const GET = [':method', 'GET', ':scheme', 'https', ':authority', 'example.com', ':path', '/a?b'];

function reason(fields: string[], extendedConnect = false): string | undefined {
  const checked = checkRequestFields(fields, extendedConnect);
  return checked.ok ? undefined : checked.reason;
}

describe('checkRequestFields (RFC 9113 §8.1-8.3)', () => {
  it('turns a valid request into node:http2 header object form, repeated names joined as Node joins them', () => {
    const checked = checkRequestFields([
      ...GET,
      'cookie',
      'a=1',
      'cookie',
      'b=2',
      'accept',
      'x',
      'accept',
      'y',
      'user-agent',
      'first',
      'user-agent',
      'second',
      'set-cookie',
      's=1',
      'content-length',
      '0',
      'te',
      'Trailers',
    ]);
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    expect({ ...checked.headers }).toEqual({
      ':method': 'GET',
      ':scheme': 'https',
      ':authority': 'example.com',
      ':path': '/a?b',
      cookie: 'a=1; b=2',
      accept: 'x, y',
      'user-agent': 'first',
      'set-cookie': ['s=1'],
      'content-length': '0',
      te: 'Trailers',
    });
    expect(checked.contentLength).toBe(0);
  });

  it('makes any field name an own property of the header object, nothing inherited', () => {
    const names = ['__proto__', 'constructor', 'tostring', 'hasownproperty', 'valueof'];
    const checked = checkRequestFields([...GET, ...names.flatMap((name) => [name, `v-${name}`])]);
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    for (const name of names) {
      expect(Object.hasOwn(checked.headers, name)).toBe(true);
      expect(checked.headers[name]).toBe(`v-${name}`);
    }
    expect(Object.keys(checked.headers)).toEqual([':method', ':scheme', ':authority', ':path', ...names]);
    expect('toString' in checked.headers).toBe(false);
    expect('hasOwnProperty' in checked.headers).toBe(false);
  });

  it.each([
    ['no :method', [':scheme', 'https', ':path', '/']],
    ['no :path', [':method', 'GET', ':scheme', 'https']],
    ['an empty :path', [':method', 'GET', ':scheme', 'https', ':path', '']],
    ['no :scheme', [':method', 'GET', ':path', '/']],
    ['a relative :path', [':method', 'GET', ':scheme', 'https', ':path', 'a']],
    ['a repeated pseudo-header', [...GET, ':path', '/b']],
    ['a pseudo-header after a regular field', [':method', 'GET', 'x', '1', ':scheme', 'https', ':path', '/']],
    ['a response pseudo-header', [...GET, ':status', '200']],
    ['an unknown pseudo-header', [...GET, ':foo', 'x']],
    [':protocol without extended CONNECT', [...GET, ':protocol', 'websocket']],
    ['an upper-case name', [...GET, 'X-Upper', '1']],
    ['a name with a space', [...GET, 'x y', '1']],
    ['an empty name', [...GET, '', '1']],
    ['connection', [...GET, 'connection', 'close']],
    ['keep-alive', [...GET, 'keep-alive', '5']],
    ['transfer-encoding', [...GET, 'transfer-encoding', 'chunked']],
    ['upgrade', [...GET, 'upgrade', 'h2c']],
    ['proxy-connection', [...GET, 'proxy-connection', 'x']],
    ['te other than trailers', [...GET, 'te', 'gzip']],
    ['a value with CR LF', [...GET, 'x', 'a\r\nb: c']],
    ['a value with NUL', [...GET, 'x', 'a\u0000']],
    ['a non-numeric content-length', [...GET, 'content-length', '1x']],
    ['conflicting content-lengths', [...GET, 'content-length', '1', 'content-length', '2']],
    ['CONNECT with :path', [':method', 'CONNECT', ':authority', 'a:443', ':path', '/']],
    ['CONNECT without :authority', [':method', 'CONNECT']],
  ])('refuses %s', (_name, fields) => {
    expect(reason(fields)).toBeDefined();
  });

  it('accepts OPTIONS *, CONNECT, extended CONNECT when enabled, and a repeated equal content-length', () => {
    expect(reason([':method', 'OPTIONS', ':scheme', 'https', ':path', '*'])).toBeUndefined();
    expect(reason([':method', 'CONNECT', ':authority', 'a:443'])).toBeUndefined();
    expect(
      reason([...GET.slice(0, 1), 'CONNECT', ...GET.slice(2), ':protocol', 'websocket'], true),
    ).toBeUndefined();
    const checked = checkRequestFields([...GET, 'content-length', '5', 'content-length', '5']);
    expect(checked.ok && checked.contentLength).toBe(5);
  });
});
