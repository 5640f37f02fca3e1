import { describe, expect, it } from 'vitest';
import {
  compareHostnameSpecificity,
  effectiveHostnames,
  hostnameMatches,
  intersectHostname,
} from '../../src/gateway/hostnames.ts';

describe('hostnameMatches', () => {
  it.each([
    ['foo.example.com', 'foo.example.com', true],
    ['foo.example.com', 'bar.example.com', false],
    ['foo.example.com', '*.example.com', true],
    ['a.b.example.com', '*.example.com', true],
    ['example.com', '*.example.com', false],
    ['fooexample.com', '*.example.com', false],
    ['*.foo.example.com', '*.example.com', true],
    ['*.example.com', '*.example.com', true],
    ['*.example.com', '*.foo.example.com', false],
    ['anything.at.all', '*', true],
  ])('%s under %s is %s', (host, pattern, expected) => {
    expect(hostnameMatches(host, pattern)).toBe(expected);
  });
});

describe('intersectHostname', () => {
  it.each([
    [undefined, 'foo.example.com', 'foo.example.com'],
    [undefined, '*.example.com', '*.example.com'],
    ['foo.example.com', 'foo.example.com', 'foo.example.com'],
    ['foo.example.com', 'bar.example.com', undefined],
    ['*.example.com', 'foo.example.com', 'foo.example.com'],
    ['*.example.com', 'example.com', undefined],
    ['very.specific.com', '*.specific.com', 'very.specific.com'],
    ['*.example.com', '*.foo.example.com', '*.foo.example.com'],
    ['*.foo.example.com', '*.example.com', '*.foo.example.com'],
    ['*.wildcard.io', '*.anotherwildcard.io', undefined],
  ])('listener %s x route %s = %s', (listener, route, expected) => {
    expect(intersectHostname(listener, route)).toBe(expected);
  });
});

describe('effectiveHostnames', () => {
  it('is the listener hostname, or any host, when the route has none', () => {
    expect(effectiveHostnames('*.example.com', [])).toEqual(['*.example.com']);
    expect(effectiveHostnames(undefined, [])).toEqual(['*']);
  });

  it('keeps only the route hostnames that intersect, lower-cased and once each', () => {
    expect(
      effectiveHostnames('*.wildcard.io', [
        'non.matching.com',
        'wildcard.io',
        'Foo.Wildcard.io',
        'foo.wildcard.io',
      ]),
    ).toEqual(['foo.wildcard.io']);
  });

  it('is empty when nothing intersects (NoMatchingListenerHostname)', () => {
    expect(effectiveHostnames('very.specific.com', ['specific.but.wrong.com', 'wildcard.io'])).toEqual([]);
  });
});

describe('compareHostnameSpecificity', () => {
  it('orders exact, then longer wildcards, then any host', () => {
    const sorted = [
      '*',
      '*.example.com',
      'b.example.com',
      undefined,
      '*.foo.example.com',
      'a.example.com',
    ].sort(compareHostnameSpecificity);
    expect(sorted).toEqual([
      'a.example.com',
      'b.example.com',
      '*.foo.example.com',
      '*.example.com',
      '*',
      undefined,
    ]);
  });
});
