import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../src/lb/seeded-random.ts';
import { HpackDecoder, HpackEncoder, HpackError, maxBlockLength } from '../../../src/net/http2/hpack.ts';
import { huffmanEncode, huffmanEncodedLength } from '../../../src/net/http2/hpack-huffman.ts';
import { writeInteger } from '../../../src/net/http2/hpack-integer.ts';

const LIMIT = 64 * 1024;

/** RFC hex dumps ("8286 8441 ...") to bytes. */
function hex(dump: string): Buffer {
  return Buffer.from(dump.replace(/\s+/g, ''), 'hex');
}

function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/** Header lists written as the RFC does, "name: value" a line, to the flat form. */
function fields(...lines: string[]): string[] {
  return lines.flatMap((line) => {
    const colon = line.indexOf(': ', 1);
    return [line.slice(0, colon), line.slice(colon + 2)];
  });
}

function decoder(maxTableSize = 4096): HpackDecoder {
  return new HpackDecoder({ maxTableSize, maxHeaderListSize: LIMIT });
}

function expectMalformed(block: Buffer | number[], message: RegExp, d = decoder()): void {
  expect(() => d.decode(Array.isArray(block) ? Uint8Array.from(block) : block)).toThrow(HpackError);
  expect(() => decoder().decode(Array.isArray(block) ? Uint8Array.from(block) : block)).toThrow(message);
}

describe('C.1 integers', () => {
  it('writes 10 and 1337 with a 5-bit prefix and 42 on an octet', () => {
    const out = new Uint8Array(8);
    expect(toHex(out.subarray(0, writeInteger(out, 0, 5, 0, 10)))).toBe('0a');
    expect(toHex(out.subarray(0, writeInteger(out, 0, 5, 0, 1337)))).toBe('1f9a0a');
    expect(toHex(out.subarray(0, writeInteger(out, 0, 8, 0, 42)))).toBe('2a');
  });

  it('reads 5-bit prefix integers (the table size update is one): 10 and 1337', () => {
    const d = decoder(2000);
    expect(d.decode(hex('2a'))).toEqual([]);
    expect(d.tableSize().capacity).toBe(10);
    expect(d.decode(hex('3f9a0a'))).toEqual([]);
    expect(d.tableSize().capacity).toBe(1337);
  });
});

describe('C.2 field representations', () => {
  const cases = [
    {
      name: 'C.2.1 literal with indexing',
      block: '400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572',
      list: fields('custom-key: custom-header'),
      table: fields('custom-key: custom-header'),
      size: 55,
      encoderMatches: true,
    },
    {
      name: 'C.2.2 literal without indexing',
      block: '040c 2f73 616d 706c 652f 7061 7468',
      list: fields(':path: /sample/path'),
      table: [],
      size: 0,
      encoderMatches: true,
    },
    {
      // Our encoder indexes `password` (not a name it knows as a credential), so only decoding is compared.
      name: 'C.2.3 literal never indexed',
      block: '1008 7061 7373 776f 7264 0673 6563 7265 74',
      list: fields('password: secret'),
      table: [],
      size: 0,
      encoderMatches: false,
    },
    {
      name: 'C.2.4 indexed',
      block: '82',
      list: fields(':method: GET'),
      table: [],
      size: 0,
      encoderMatches: true,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = decoder();
      expect(d.decode(hex(c.block))).toEqual(c.list);
      expect(d.tableEntries()).toEqual(c.table);
      expect(d.tableSize().size).toBe(c.size);
      if (c.encoderMatches) {
        const e = new HpackEncoder({ huffman: false });
        expect(toHex(e.encode(c.list))).toBe(toHex(hex(c.block)));
        expect(e.tableEntries()).toEqual(c.table);
      }
    });
  }
});

/** Three requests on one connection (C.3 raw, C.4 Huffman): the same lists and tables. */
const REQUESTS = [
  {
    list: fields(':method: GET', ':scheme: http', ':path: /', ':authority: www.example.com'),
    raw: '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
    huffman: '8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff',
    table: fields(':authority: www.example.com'),
    size: 57,
  },
  {
    list: fields(
      ':method: GET',
      ':scheme: http',
      ':path: /',
      ':authority: www.example.com',
      'cache-control: no-cache',
    ),
    raw: '8286 84be 5808 6e6f 2d63 6163 6865',
    huffman: '8286 84be 5886 a8eb 1064 9cbf',
    table: fields('cache-control: no-cache', ':authority: www.example.com'),
    size: 110,
  },
  {
    list: fields(
      ':method: GET',
      ':scheme: https',
      ':path: /index.html',
      ':authority: www.example.com',
      'custom-key: custom-value',
    ),
    raw: '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65',
    huffman: '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf',
    table: fields('custom-key: custom-value', 'cache-control: no-cache', ':authority: www.example.com'),
    size: 164,
  },
];

describe('C.3 and C.4 requests, both directions byte for byte', () => {
  for (const [section, key, huffman] of [
    ['C.3 (no Huffman)', 'raw', false],
    ['C.4 (Huffman)', 'huffman', true],
  ] as const) {
    it(`${section}: decodes each block to its list and table`, () => {
      const d = decoder();
      for (const r of REQUESTS) {
        expect(d.decode(hex(r[key]))).toEqual(r.list);
        expect(d.tableEntries()).toEqual(r.table);
        expect(d.tableSize().size).toBe(r.size);
      }
    });

    it(`${section}: encodes each list to the RFC's block`, () => {
      const e = new HpackEncoder({ huffman });
      for (const r of REQUESTS) {
        expect(toHex(e.encode(r.list))).toBe(toHex(hex(r[key])));
        expect(e.tableEntries()).toEqual(r.table);
        expect(e.tableSize().size).toBe(r.size);
      }
    });
  }
});

/** Three responses, table size 256 (C.5 raw, C.6 Huffman), with evictions. */
const DATE1 = 'Mon, 21 Oct 2013 20:13:21 GMT';
const DATE2 = 'Mon, 21 Oct 2013 20:13:22 GMT';
const COOKIE = 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1';
const RESPONSES = [
  {
    list: fields(
      ':status: 302',
      'cache-control: private',
      `date: ${DATE1}`,
      'location: https://www.example.com',
    ),
    raw: `4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
          2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70
          6c65 2e63 6f6d`,
    huffman: `4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
              2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3`,
    table: fields(
      'location: https://www.example.com',
      `date: ${DATE1}`,
      'cache-control: private',
      ':status: 302',
    ),
    size: 222,
  },
  {
    list: fields(
      ':status: 307',
      'cache-control: private',
      `date: ${DATE1}`,
      'location: https://www.example.com',
    ),
    raw: '4803 3330 37c1 c0bf',
    huffman: '4883 640e ffc1 c0bf',
    table: fields(
      ':status: 307',
      'location: https://www.example.com',
      `date: ${DATE1}`,
      'cache-control: private',
    ),
    size: 222,
  },
  {
    list: fields(
      ':status: 200',
      'cache-control: private',
      `date: ${DATE2}`,
      'location: https://www.example.com',
      'content-encoding: gzip',
      `set-cookie: ${COOKIE}`,
    ),
    raw: `88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
          54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
          5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e
          3d31`,
    huffman: `88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
              77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
              9587 3160 65c0 03ed 4ee5 b106 3d50 07`,
    table: fields(`set-cookie: ${COOKIE}`, 'content-encoding: gzip', `date: ${DATE2}`),
    size: 215,
  },
];

describe('C.5 and C.6 responses with eviction at table size 256', () => {
  for (const [section, key, huffman] of [
    ['C.5 (no Huffman)', 'raw', false],
    ['C.6 (Huffman)', 'huffman', true],
  ] as const) {
    it(`${section}: decodes each block to its list and table`, () => {
      const d = decoder(256);
      // The RFC's connection runs at 256 from the start; ours starts at the protocol's 4096 and is told so.
      expect(d.decode(hex('3fe101'))).toEqual([]);
      for (const r of RESPONSES) {
        expect(d.decode(hex(r[key]))).toEqual(r.list);
        expect(d.tableEntries()).toEqual(r.table);
        expect(d.tableSize().size).toBe(r.size);
      }
    });

    it(`${section}: our encoder (location and set-cookie never indexed) round-trips with the same table`, () => {
      const e = new HpackEncoder({ huffman });
      e.setPeerMaxTableSize(256);
      const d = decoder(256);
      for (const r of RESPONSES) {
        const block = e.encode(r.list);
        expect(d.decode(block)).toEqual(r.list);
        expect(d.tableEntries()).toEqual(e.tableEntries());
        expect(d.tableSize()).toEqual(e.tableSize());
      }
      // The first block told the decoder the size; location and set-cookie stayed out of the table, so
      // :status 307 and the first date are still there.
      expect(e.tableSize().capacity).toBe(256);
      expect(e.tableEntries()).toEqual(
        fields('content-encoding: gzip', `date: ${DATE2}`, ':status: 307', `date: ${DATE1}`),
      );
    });
  }
});

describe('malformed blocks are HpackErrors', () => {
  it('index 0', () => expectMalformed([0x80], /index 0/));
  it('an index past the static table when the dynamic table is empty', () => {
    expectMalformed([0xbe], /past the end/);
    expectMalformed([0x7e, 0x01, 0x61], /past the end/); // literal, name index 62
  });
  it('an index past the dynamic table', () => {
    const d = decoder();
    d.decode(hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572'));
    expect(d.decode(hex('be'))).toEqual(fields('custom-key: custom-header'));
    expect(() => d.decode(hex('bf'))).toThrow(HpackError);
  });
  it('a string running past the block', () => {
    expectMalformed([0x00, 0x05, 0x61, 0x62], /runs past/);
    expectMalformed([0x44, 0x85, 0xff], /runs past/);
    expectMalformed([0x00], /missing/);
    expectMalformed([0x00, 0x01, 0x61], /missing/);
  });
  it('an integer running past the block, one over 2^31 - 1, and one with too many octets', () => {
    expectMalformed([0xff], /past the end/);
    expectMalformed([0xff, 0x80], /past the end/);
    // 127 + 0x7fffff80 = 2^31 - 1 is the largest accepted: as an index, it is past the table.
    expectMalformed([0xff, 0x80, 0xff, 0xff, 0xff, 0x07], /past the end of the table/);
    expectMalformed([0xff, 0x81, 0xff, 0xff, 0xff, 0x07], /above 2\^31/);
    expectMalformed([0xff, 0xff, 0xff, 0xff, 0xff, 0x0f], /above 2\^31/);
    expectMalformed([0xff, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00], /longer than/);
  });
  it('Huffman strings with EOS, long padding or padding with zeros', () => {
    expectMalformed([0x00, 0x85, 0x1f, 0xff, 0xff, 0xff, 0xff, 0x80], /Huffman/); // 'a' EOS; value missing
    expectMalformed([0x04, 0x82, 0x1f, 0xff], /Huffman/); // 'a' + 11 bits of padding
    expectMalformed([0x04, 0x81, 0x1e], /Huffman/); // padding 110
  });
  it('a table size update after a field, or above our SETTINGS_HEADER_TABLE_SIZE', () => {
    expectMalformed([0x82, 0x20], /after a header field/);
    expectMalformed(hex('3fe21f'), /above our limit/); // 4097
    expect(() => decoder(100).decode(hex('3f46'))).toThrow(/above our limit 100/); // 101
    expect(decoder(100).decode(hex('3f45 20 3f45 82'))).toEqual(fields(':method: GET')); // 100, 0, 100: fine
  });
  it('random bytes never throw anything but HpackError, and leave the decoder usable', () => {
    const random = mulberry32(45);
    const d = new HpackDecoder({ maxHeaderListSize: 2048 });
    let errors = 0;
    for (let i = 0; i < 20_000; i++) {
      const block = new Uint8Array(1 + Math.floor(random() * 40));
      for (let j = 0; j < block.length; j++) block[j] = Math.floor(random() * 256);
      try {
        const list = d.decode(block);
        if (list !== undefined) for (const s of list) expect(typeof s).toBe('string');
      } catch (error) {
        if (!(error instanceof HpackError)) throw error;
        errors++;
      }
    }
    expect(errors).toBeGreaterThan(1000);
    expect(errors).toBeLessThan(20_000);
  });
});

describe('header list size (RFC 9113 §6.5.2)', () => {
  it('answers undefined past the limit and still applies the whole block to the table', () => {
    const d = new HpackDecoder({ maxHeaderListSize: 100 });
    // custom-key: custom-header (55) indexed, then referenced twice: 165 > 100.
    const block = hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572 be be');
    expect(d.decode(block)).toBeUndefined();
    expect(d.tableEntries()).toEqual(fields('custom-key: custom-header'));
    // A list exactly at the limit is accepted.
    const atLimit = new HpackDecoder({ maxHeaderListSize: 110 });
    expect(
      atLimit.decode(hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572 be')),
    ).toEqual(fields('custom-key: custom-header', 'custom-key: custom-header'));
  });

  it('decodes Huffman literals longer than the shared scratch buffer, and short ones after them', () => {
    const long = 'abcdefghij'.repeat(3000); // 30,000 octets, ~19,000 Huffman-coded
    const coded = new Uint8Array(huffmanEncodedLength(long));
    huffmanEncode(long, coded, 0);
    const head = new Uint8Array(16);
    const at = writeInteger(head, 0, 7, 0x80, coded.length);
    const block = Buffer.concat([hex('0006 782d 6c6f 6e67'), head.subarray(0, at), coded, hex('82')]);
    const d = decoder();
    expect(d.decode(block)).toEqual(['x-long', long, ':method', 'GET']);
    expect(d.decode(hex('418c f1e3 c2e5 f23a 6ba0 ab90 f4ff'))).toEqual(
      fields(':authority: www.example.com'),
    );
  });

  it('a block of references to one large entry (an HPACK bomb) keeps nothing past the limit', () => {
    const e = new HpackEncoder();
    const big = 'x'.repeat(3000);
    const d = new HpackDecoder({ maxHeaderListSize: 16 * 1024 });
    expect(d.decode(e.encode(['x-big', big]))).toEqual(['x-big', big]);
    const bomb = e.encode(Array.from({ length: 4000 }, (_, i) => (i % 2 === 0 ? 'x-big' : big)));
    expect(bomb.length).toBe(2000); // one octet each
    expect(d.decode(bomb)).toBeUndefined();
  });
});

describe('the encoder', () => {
  it('sends credentials and short cookies never-indexed, and keeps them out of its table', () => {
    const e = new HpackEncoder({ huffman: false });
    const list = fields(
      'authorization: Bearer abc',
      'proxy-authorization: Basic xyz',
      'cookie: id=1',
      'set-cookie: id=2; HttpOnly',
      'cookie: session=0123456789abcdefghij',
    );
    const block = e.encode(list);
    // Static name indexes 23, 49, 32, 55 with the never-indexed prefix 0001.
    expect(block[0]).toBe(0x1f);
    expect(block[1]).toBe(23 - 15);
    expect(e.tableEntries()).toEqual(fields('cookie: session=0123456789abcdefghij'));
    const d = decoder();
    expect(d.decode(block)).toEqual(list);
    // Sent again: still literal, never from the table.
    const again = e.encode(list.slice(0, 2));
    expect(toHex(again)).toBe(toHex(block.subarray(0, again.length)));
  });

  it('Huffman-codes the literals that enter the table when shorter, and sends per-message ones raw', () => {
    const e = new HpackEncoder();
    const d = decoder();
    // '\x00' codes to 13 bits: raw is shorter even for an indexed field.
    const binary = e.encode(['x-bin', '\x00\x00\x00\x00']);
    expect(toHex(binary)).toBe(`40 84 f2b4 66ab 04 00000000`.replace(/ /g, ''));
    expect(d.decode(binary)).toEqual(['x-bin', '\x00\x00\x00\x00']);
    // Indexed: www.example.com Huffman-coded as in C.4.1. A new :path (not indexed) and a credential: raw.
    const list = fields(':authority: www.example.com', ':path: /sample/path', 'authorization: secret');
    const block = e.encode(list);
    expect(toHex(block)).toBe(
      `41 8cf1e3c2e5f23a6ba0ab90f4ff 04 0c ${toHex(Buffer.from('/sample/path'))} 1f08 06 ${toHex(Buffer.from('secret'))}`.replace(
        / /g,
        '',
      ),
    );
    expect(d.decode(block)).toEqual(list);
  });

  it('indexes :path once it repeats, and a changing value only to bring its name into the table', () => {
    const e = new HpackEncoder({ huffman: false });
    const d = decoder();
    const call = (timeout: string) =>
      fields(':method: POST', ':path: /demo.Greeter/SayHello', `grpc-timeout: ${timeout}`, 'te: trailers');
    const blocks = ['99983u', '99981u', '99979u', '99978u'].map((timeout) => {
      const block = e.encode(call(timeout));
      expect(d.decode(block)).toEqual(call(timeout));
      return block;
    });
    expect(e.tableEntries()).toEqual(
      fields(':path: /demo.Greeter/SayHello', 'te: trailers', 'grpc-timeout: 99983u'),
    );
    expect(d.tableEntries()).toEqual(e.tableEntries());
    // The fourth call: :method static (83), :path (62) and te (63) from the table, grpc-timeout a literal
    // without indexing named by index 64 (0000 prefix, 15 then 49).
    expect(toHex(blocks[3]!)).toBe(`83 be 0f31 06 ${toHex(Buffer.from('99978u'))} bf`.replace(/ /g, ''));
  });

  it('encodeInto writes the same blocks as encode, where told, and refuses a buffer without room', () => {
    const viaEncode = new HpackEncoder();
    const viaInto = new HpackEncoder();
    const frame = Buffer.alloc(4096);
    for (const list of [REQUESTS[0]!.list, REQUESTS[1]!.list, RESPONSES[2]!.list, REQUESTS[2]!.list]) {
      const end = viaInto.encodeInto(list, frame, 9);
      expect(toHex(frame.subarray(9, end))).toBe(toHex(viaEncode.encode(list)));
    }
    const list = fields(`x-long: ${'y'.repeat(100)}`);
    expect(maxBlockLength(list)).toBeGreaterThan(106);
    expect(() => viaInto.encodeInto(list, Buffer.alloc(100), 0)).toThrow(RangeError);
    // Refused before anything was written or indexed: the next block is the same on both.
    expect(toHex(frame.subarray(0, viaInto.encodeInto(list, frame, 0)))).toBe(toHex(viaEncode.encode(list)));
  });

  it('signals a table size change at the next block, the smaller size first when it shrank then grew', () => {
    const e = new HpackEncoder();
    const d = new HpackDecoder({ maxTableSize: 8192, maxHeaderListSize: LIMIT });
    const list = fields('x-one: 1', 'x-two: 2');
    d.decode(e.encode(list));
    e.setPeerMaxTableSize(0);
    e.setPeerMaxTableSize(4096);
    const block = e.encode(list);
    expect(toHex(block.subarray(0, 4))).toBe('203fe11f'); // 0, then 4096
    expect(d.decode(block)).toEqual(list);
    expect(d.tableEntries()).toEqual(e.tableEntries());
    // Our own limit caps what the peer allows.
    const small = new HpackEncoder({ maxTableSize: 64 });
    expect(toHex(small.encode([]))).toBe('3f21'); // 64, once
    small.setPeerMaxTableSize(8192);
    expect(toHex(small.encode([]))).toBe('');
  });
});

describe('seeded-random round trip', () => {
  const NAMES = [
    ':method',
    ':path',
    ':authority',
    'accept',
    'user-agent',
    'cookie',
    'x-custom',
    'x-trace',
    'date',
  ];

  it('20,000 blocks through one encoder and decoder, table sizes changing, tables equal after each', () => {
    const random = mulberry32(2026);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const values: string[] = ['GET', '/', 'gzip, deflate', ''];
    for (let i = 0; i < 200; i++) {
      let value = '';
      const length = Math.floor(random() * (random() < 0.1 ? 600 : 30));
      for (let j = 0; j < length; j++)
        value += String.fromCharCode(random() < 0.9 ? 32 + random() * 95 : random() * 256);
      values.push(value);
    }
    const e = new HpackEncoder({ maxTableSize: 4096 });
    const d = new HpackDecoder({ maxTableSize: 4096, maxHeaderListSize: 1 << 20 });
    for (let block = 0; block < 20_000; block++) {
      if (random() < 0.01) e.setPeerMaxTableSize(pick([0, 64, 256, 1024, 4096, 65536]));
      const list: string[] = [];
      const count = Math.floor(random() * 12);
      for (let f = 0; f < count; f++) {
        const name = random() < 0.8 ? pick(NAMES) : `x-n${Math.floor(random() * 50)}`;
        list.push(name, pick(values));
      }
      expect(d.decode(e.encode(list))).toEqual(list);
      expect(d.tableSize()).toEqual(e.tableSize());
      if (block % 97 === 0) expect(d.tableEntries()).toEqual(e.tableEntries());
    }
  });
});
