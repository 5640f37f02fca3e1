import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { requestAuthority } from '../../src/proxy/listen/east-west-authority.ts';

const req = (url: string, host?: string) =>
  ({ url, headers: host === undefined ? {} : { host } }) as unknown as IncomingMessage;

describe('requestAuthority', () => {
  it.each([
    ['/', 'web.demo.svc.clusterset.local', { host: 'web.demo.svc.clusterset.local', port: 80 }],
    ['/x', 'Web.Demo.svc.clusterset.local.:8080', { host: 'web.demo.svc.clusterset.local', port: 8080 }],
    [
      'http://api.shop.svc.clusterset.local/x',
      'ignored.example',
      { host: 'api.shop.svc.clusterset.local', port: 80 },
    ],
    [
      'http://api.shop.svc.clusterset.local:9090?q',
      undefined,
      { host: 'api.shop.svc.clusterset.local', port: 9090 },
    ],
    [
      'https://api.shop.svc.clusterset.local/',
      undefined,
      { host: 'api.shop.svc.clusterset.local', port: 443 },
    ],
    ['/', '[::1]:81', { host: '[::1]', port: 81 }],
  ])('%s with Host %s names %o', (url, host, expected) => {
    expect(requestAuthority(req(url, host))).toEqual(expected);
  });

  it.each([
    ['/', undefined],
    ['/', ''],
    ['/', 'bad host'],
    ['/', 'web:99999'],
    ['/', 'web:0'],
    ['ftp://web/', undefined],
    ['*', 'web'],
  ])('%s with Host %s names nothing', (url, host) => {
    expect(requestAuthority(req(url, host))).toBeUndefined();
  });
});
