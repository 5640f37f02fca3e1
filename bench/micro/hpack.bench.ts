/**
 * HPACK (src/net/http2/hpack.ts), per header block: encode and decode of a gRPC unary request, its response
 * headers and trailers, and a browser request. "warm": the block a connection sends once its dynamic table holds
 * the repeated fields (the common case); "first": the connection's first block (every field a literal), Huffman
 * on and off. Block sizes are printed first. Reported, never asserted.
 *
 *   node --import tsx --expose-gc bench/micro/hpack.bench.ts
 */
import { bench, do_not_optimize, run, summary } from 'mitata';
import { HpackDecoder, HpackEncoder } from '../../src/net/http2/hpack.ts';

const LISTS: Record<string, string[]> = {
  'gRPC request': [
    ':method',
    'POST',
    ':scheme',
    'http',
    ':path',
    '/demo.Greeter/SayHello',
    ':authority',
    'greeter.default.svc.cluster.local:50051',
    'content-type',
    'application/grpc',
    'te',
    'trailers',
    'grpc-accept-encoding',
    'identity,deflate,gzip',
    'grpc-timeout',
    '99983u',
    'user-agent',
    'grpc-node-js/1.14.7',
  ],
  'gRPC response headers': [
    ':status',
    '200',
    'content-type',
    'application/grpc',
    'grpc-accept-encoding',
    'identity,deflate,gzip',
    'date',
    'Mon, 07 Dec 2026 04:30:00 GMT',
  ],
  'gRPC trailers': ['grpc-status', '0', 'grpc-message', ''],
  'browser request': [
    ':method',
    'GET',
    ':scheme',
    'https',
    ':authority',
    'www.example.com',
    ':path',
    '/assets/app.3f9a1c.js',
    'sec-ch-ua',
    '"Chromium";v="131", "Not_A Brand";v="24"',
    'sec-ch-ua-mobile',
    '?0',
    'sec-ch-ua-platform',
    '"Linux"',
    'user-agent',
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    'accept',
    '*/*',
    'sec-fetch-site',
    'same-origin',
    'sec-fetch-mode',
    'no-cors',
    'sec-fetch-dest',
    'script',
    'referer',
    'https://www.example.com/',
    'accept-encoding',
    'gzip, deflate, br, zstd',
    'accept-language',
    'en-US,en;q=0.9',
    'cookie',
    'session=8f14e45fceea167a5a36dedd4bea2543; theme=dark; consent=1',
  ],
};

const LIMIT = 64 * 1024;

/** The block a warmed-up connection sends for this list (and a decoder in step with it). */
function warm(list: string[]): { encoder: HpackEncoder; decoder: HpackDecoder; block: Buffer } {
  const encoder = new HpackEncoder();
  const decoder = new HpackDecoder({ maxHeaderListSize: LIMIT });
  let block = encoder.encode(list);
  for (let i = 0; i < 3; i++) {
    decoder.decode(block);
    block = encoder.encode(list);
  }
  // Decoding the warm block must not change the table, or repeating it would drift.
  const before = decoder.tableEntries().join('\n');
  decoder.decode(block);
  if (decoder.tableEntries().join('\n') !== before) throw new Error('warm block changes the table');
  return { encoder, decoder, block };
}

for (const [name, list] of Object.entries(LISTS)) {
  const raw = list.reduce((sum, s) => sum + s.length, 0);
  const first = new HpackEncoder().encode(list).length;
  const firstRaw = new HpackEncoder({ huffman: false }).encode(list).length;
  const { block } = warm(list);
  process.stdout.write(
    `${name}: ${list.length / 2} fields, ${raw} octets of names and values; first block ${first} octets ` +
      `(${firstRaw} without Huffman), warm block ${block.length}\n`,
  );
}

for (const [name, list] of Object.entries(LISTS)) {
  summary(() => {
    const { encoder, decoder, block } = warm(list);
    bench(`encode warm, ${name}`, () => do_not_optimize(encoder.encode(list)));
    bench(`decode warm, ${name}`, () => do_not_optimize(decoder.decode(block)));
  });
  summary(() => {
    const huffmanBlock = new HpackEncoder().encode(list);
    const rawBlock = new HpackEncoder({ huffman: false }).encode(list);
    bench(`encode first, Huffman, ${name}`, () => do_not_optimize(new HpackEncoder().encode(list)));
    bench(`encode first, raw, ${name}`, () =>
      do_not_optimize(new HpackEncoder({ huffman: false }).encode(list)),
    );
    bench(`decode first, Huffman, ${name}`, () =>
      do_not_optimize(new HpackDecoder({ maxHeaderListSize: LIMIT }).decode(huffmanBlock)),
    );
    bench(`decode first, raw, ${name}`, () =>
      do_not_optimize(new HpackDecoder({ maxHeaderListSize: LIMIT }).decode(rawBlock)),
    );
  });
}

// A browser fetching page assets: the same headers with a new :path each (a literal every block, sent raw: see
// HpackEncoderOptions.huffman). The blocks leave the table as it is, so they can be decoded in any order.
summary(() => {
  const list = LISTS['browser request']!;
  const paths = Array.from(
    { length: 64 },
    (_, i) => `/assets/chunk-${i}.${(i * 2654435761).toString(16)}.js`,
  );
  const lists = paths.map((path) => list.map((item, i) => (i > 0 && list[i - 1] === ':path' ? path : item)));
  {
    const encoder = new HpackEncoder();
    const decoder = new HpackDecoder({ maxHeaderListSize: LIMIT });
    for (const l of lists) decoder.decode(encoder.encode(l));
    const blocks = lists.map((l) => encoder.encode(l));
    for (const block of blocks) decoder.decode(block);
    const before = decoder.tableEntries().join('\n');
    for (const block of blocks) decoder.decode(block);
    if (decoder.tableEntries().join('\n') !== before) throw new Error('path blocks change the table');
    process.stdout.write(`browser request, new path each: block ${blocks[0]!.length} octets\n`);
    let i = 0;
    bench('encode new path, browser request', () => do_not_optimize(encoder.encode(lists[i++ & 63]!)));
    let j = 0;
    bench('decode new path, browser request', () => do_not_optimize(decoder.decode(blocks[j++ & 63]!)));
  }
});

await run();
