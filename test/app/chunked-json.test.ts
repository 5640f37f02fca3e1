import { describe, expect, it } from 'vitest';
import { decodeChunked, encodeChunked } from '../../src/app/chunked-json.ts';

const table = {
  ports: [
    {
      port: 80,
      listeners: [
        {
          name: 'http',
          virtualHosts: Array.from({ length: 300 }, (_, i) => ({
            hostname: `app-${i}.example`,
            routes: [{ path: `/r${i}`, backends: [{ id: `svc-${i}`, weight: 1 }] }],
          })),
        },
      ],
    },
  ],
  backends: Object.fromEntries(
    Array.from({ length: 200 }, (_, i) => [
      `Service/shop/svc-${i}:80`,
      { id: `svc-${i}`, tiers: [Array.from({ length: 5 }, (_, e) => ({ address: `10.0.${i}.${e}` }))] },
    ]),
  ),
  huge: { endpoints: Array.from({ length: 2_000 }, (_, i) => ({ address: `10.1.${i >> 8}.${i & 255}` })) },
  empty: [],
  nothing: null,
  text: 'plain',
};

describe('chunked JSON', () => {
  it('rebuilds the value exactly from pieces of at most about maxBytes', async () => {
    const chunked = encodeChunked(table, 1_024);
    expect(chunked.ends.length).toBeGreaterThan(50);
    let start = 0;
    for (const end of chunked.ends) {
      // A piece is its items plus their path: never much over the limit unless one leaf value is.
      expect(end - start).toBeLessThan(2_048);
      start = end;
    }
    expect(await decodeChunked(chunked, 0)).toEqual(table);
  });

  it('sends a small value as one piece, and scalars and empty containers as they are', async () => {
    for (const value of [table.text, 42, null, [], {}, { a: [1, 2, { b: 'c' }] }]) {
      const chunked = encodeChunked(value);
      expect(chunked.ends).toHaveLength(1);
      expect(await decodeChunked(chunked, 0)).toEqual(value);
    }
  });

  it('drops undefined object values and writes undefined array items as null, as JSON does', async () => {
    const value = { a: undefined, b: [undefined, 1], c: 'x'.repeat(200) };
    expect(await decodeChunked(encodeChunked(value, 64), 0)).toEqual(JSON.parse(JSON.stringify(value)));
  });

  it('keeps object keys that look like array indexes and paths with dots as keys', async () => {
    const value = {
      '0': 'zero',
      'a.b': { '1': 'x'.repeat(100) },
      list: [['x'.repeat(100)], 'y'.repeat(100)],
    };
    expect(await decodeChunked(encodeChunked(value, 64), 0)).toEqual(value);
  });
});
