import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../src/lb/seeded-random.ts';
import {
  EOS,
  HUFFMAN_CODES,
  HUFFMAN_LENGTHS,
  huffmanDecode,
  huffmanEncode,
  huffmanEncodedLength,
} from '../../../src/net/http2/hpack-huffman.ts';

function encode(text: string): Uint8Array {
  const out = new Uint8Array(huffmanEncodedLength(text));
  expect(huffmanEncode(text, out, 0)).toBe(out.length);
  return out;
}

function decode(bytes: Uint8Array): string | undefined {
  const out = new Uint8Array(bytes.length * 2 + 1);
  const length = huffmanDecode(bytes, 0, bytes.length, out);
  return length < 0 ? undefined : Buffer.from(out.subarray(0, length)).toString('latin1');
}

describe('the Huffman code table (RFC 7541 Appendix B)', () => {
  it('is canonical: sorted by length then symbol, each code is the previous one plus one, shifted', () => {
    // Any slip in copying a code or a length from the RFC breaks this.
    const symbols = Array.from({ length: 257 }, (_, symbol) => symbol).sort(
      (a, b) => HUFFMAN_LENGTHS[a]! - HUFFMAN_LENGTHS[b]! || a - b,
    );
    let code = -1;
    let length = HUFFMAN_LENGTHS[symbols[0]!]!;
    for (const symbol of symbols) {
      code = (code + 1) * 2 ** (HUFFMAN_LENGTHS[symbol]! - length);
      length = HUFFMAN_LENGTHS[symbol]!;
      expect(HUFFMAN_CODES[symbol], `symbol ${symbol}`).toBe(code);
    }
  });

  it('is complete (Kraft sum 1) with EOS the 30 one bits, and spot codes as printed in the RFC', () => {
    let kraft = 0;
    for (let symbol = 0; symbol <= EOS; symbol++) kraft += 2 ** -HUFFMAN_LENGTHS[symbol]!;
    expect(kraft).toBe(1);
    expect([HUFFMAN_CODES[EOS], HUFFMAN_LENGTHS[EOS]]).toEqual([0x3fffffff, 30]);
    expect([HUFFMAN_CODES[0], HUFFMAN_LENGTHS[0]]).toEqual([0x1ff8, 13]);
    expect([HUFFMAN_CODES[0x30], HUFFMAN_LENGTHS[0x30]]).toEqual([0x0, 5]); // '0'
    expect([HUFFMAN_CODES[0x7a], HUFFMAN_LENGTHS[0x7a]]).toEqual([0x7b, 7]); // 'z'
    expect([HUFFMAN_CODES[255], HUFFMAN_LENGTHS[255]]).toEqual([0x3ffffee, 26]);
  });
});

describe('Huffman strings', () => {
  it('encodes www.example.com as RFC 7541 C.4.1 and back', () => {
    const bytes = encode('www.example.com');
    expect(Buffer.from(bytes).toString('hex')).toBe('f1e3c2e5f23a6ba0ab90f4ff');
    expect(decode(bytes)).toBe('www.example.com');
  });

  it('round-trips every octet, alone and in random strings', () => {
    for (let octet = 0; octet < 256; octet++) {
      const text = String.fromCharCode(octet).repeat(3);
      expect(decode(encode(text))).toBe(text);
    }
    const random = mulberry32(7);
    for (let i = 0; i < 500; i++) {
      const length = Math.floor(random() * 40);
      let text = '';
      for (let j = 0; j < length; j++) text += String.fromCharCode(Math.floor(random() * 256));
      expect(decode(encode(text))).toBe(text);
    }
  });

  it('refuses EOS inside a string', () => {
    // 'a' (00011) then EOS (30 ones) then padding: 00011111 11111111 11111111 11111111 1111111(1)
    expect(decode(Uint8Array.from([0x1f, 0xff, 0xff, 0xff, 0xff]))).toBeUndefined();
  });

  it('refuses padding of 8 or more bits, and padding that is not all ones', () => {
    // 'a' = 00011 + 111 is valid; 'a' + 111 + 11111111 is 11 bits of padding.
    expect(decode(Uint8Array.from([0x1f]))).toBe('a');
    expect(decode(Uint8Array.from([0x1f, 0xff]))).toBeUndefined();
    // A whole octet of ones as padding after a string that ends on an octet boundary (8 x '0' = 40 bits).
    expect(encode('00000000')).toHaveLength(5);
    expect(decode(Uint8Array.from([...encode('00000000'), 0xff]))).toBeUndefined();
    // 'a' + 110: padding with a zero bit.
    expect(decode(Uint8Array.from([0x1e]))).toBeUndefined();
  });

  it('decodes the empty string', () => {
    expect(decode(new Uint8Array(0))).toBe('');
  });
});
