/**
 * The Huffman code of HPACK (RFC 7541 §5.2, Appendix B): encoding into a buffer, and decoding with a 4-bit
 * state machine built once from the code table (one table lookup per half byte, no tree walk per bit).
 */

/**
 * RFC 7541 Appendix B as data: for each symbol 0..255 and EOS (256), its code (aligned to the least significant
 * bit) then its length in bits. The code is canonical (codes of one length are consecutive, in symbol order) and
 * complete; test/net/http2/hpack-huffman.test.ts checks both, which catches any slip in this table.
 */
// biome-ignore format: the table reads as the RFC's, eight symbols a row
const CODE_TABLE: readonly number[] = [
  0x1ff8, 13, 0x7fffd8, 23, 0xfffffe2, 28, 0xfffffe3, 28, 0xfffffe4, 28, 0xfffffe5, 28, 0xfffffe6, 28, 0xfffffe7, 28,
  0xfffffe8, 28, 0xffffea, 24, 0x3ffffffc, 30, 0xfffffe9, 28, 0xfffffea, 28, 0x3ffffffd, 30, 0xfffffeb, 28, 0xfffffec, 28,
  0xfffffed, 28, 0xfffffee, 28, 0xfffffef, 28, 0xffffff0, 28, 0xffffff1, 28, 0xffffff2, 28, 0x3ffffffe, 30, 0xffffff3, 28,
  0xffffff4, 28, 0xffffff5, 28, 0xffffff6, 28, 0xffffff7, 28, 0xffffff8, 28, 0xffffff9, 28, 0xffffffa, 28, 0xffffffb, 28,
  0x14, 6, 0x3f8, 10, 0x3f9, 10, 0xffa, 12, 0x1ff9, 13, 0x15, 6, 0xf8, 8, 0x7fa, 11,
  0x3fa, 10, 0x3fb, 10, 0xf9, 8, 0x7fb, 11, 0xfa, 8, 0x16, 6, 0x17, 6, 0x18, 6,
  0x0, 5, 0x1, 5, 0x2, 5, 0x19, 6, 0x1a, 6, 0x1b, 6, 0x1c, 6, 0x1d, 6,
  0x1e, 6, 0x1f, 6, 0x5c, 7, 0xfb, 8, 0x7ffc, 15, 0x20, 6, 0xffb, 12, 0x3fc, 10,
  0x1ffa, 13, 0x21, 6, 0x5d, 7, 0x5e, 7, 0x5f, 7, 0x60, 7, 0x61, 7, 0x62, 7,
  0x63, 7, 0x64, 7, 0x65, 7, 0x66, 7, 0x67, 7, 0x68, 7, 0x69, 7, 0x6a, 7,
  0x6b, 7, 0x6c, 7, 0x6d, 7, 0x6e, 7, 0x6f, 7, 0x70, 7, 0x71, 7, 0x72, 7,
  0xfc, 8, 0x73, 7, 0xfd, 8, 0x1ffb, 13, 0x7fff0, 19, 0x1ffc, 13, 0x3ffc, 14, 0x22, 6,
  0x7ffd, 15, 0x3, 5, 0x23, 6, 0x4, 5, 0x24, 6, 0x5, 5, 0x25, 6, 0x26, 6,
  0x27, 6, 0x6, 5, 0x74, 7, 0x75, 7, 0x28, 6, 0x29, 6, 0x2a, 6, 0x7, 5,
  0x2b, 6, 0x76, 7, 0x2c, 6, 0x8, 5, 0x9, 5, 0x2d, 6, 0x77, 7, 0x78, 7,
  0x79, 7, 0x7a, 7, 0x7b, 7, 0x7ffe, 15, 0x7fc, 11, 0x3ffd, 14, 0x1ffd, 13, 0xffffffc, 28,
  0xfffe6, 20, 0x3fffd2, 22, 0xfffe7, 20, 0xfffe8, 20, 0x3fffd3, 22, 0x3fffd4, 22, 0x3fffd5, 22, 0x7fffd9, 23,
  0x3fffd6, 22, 0x7fffda, 23, 0x7fffdb, 23, 0x7fffdc, 23, 0x7fffdd, 23, 0x7fffde, 23, 0xffffeb, 24, 0x7fffdf, 23,
  0xffffec, 24, 0xffffed, 24, 0x3fffd7, 22, 0x7fffe0, 23, 0xffffee, 24, 0x7fffe1, 23, 0x7fffe2, 23, 0x7fffe3, 23,
  0x7fffe4, 23, 0x1fffdc, 21, 0x3fffd8, 22, 0x7fffe5, 23, 0x3fffd9, 22, 0x7fffe6, 23, 0x7fffe7, 23, 0xffffef, 24,
  0x3fffda, 22, 0x1fffdd, 21, 0xfffe9, 20, 0x3fffdb, 22, 0x3fffdc, 22, 0x7fffe8, 23, 0x7fffe9, 23, 0x1fffde, 21,
  0x7fffea, 23, 0x3fffdd, 22, 0x3fffde, 22, 0xfffff0, 24, 0x1fffdf, 21, 0x3fffdf, 22, 0x7fffeb, 23, 0x7fffec, 23,
  0x1fffe0, 21, 0x1fffe1, 21, 0x3fffe0, 22, 0x1fffe2, 21, 0x7fffed, 23, 0x3fffe1, 22, 0x7fffee, 23, 0x7fffef, 23,
  0xfffea, 20, 0x3fffe2, 22, 0x3fffe3, 22, 0x3fffe4, 22, 0x7ffff0, 23, 0x3fffe5, 22, 0x3fffe6, 22, 0x7ffff1, 23,
  0x3ffffe0, 26, 0x3ffffe1, 26, 0xfffeb, 20, 0x7fff1, 19, 0x3fffe7, 22, 0x7ffff2, 23, 0x3fffe8, 22, 0x1ffffec, 25,
  0x3ffffe2, 26, 0x3ffffe3, 26, 0x3ffffe4, 26, 0x7ffffde, 27, 0x7ffffdf, 27, 0x3ffffe5, 26, 0xfffff1, 24, 0x1ffffed, 25,
  0x7fff2, 19, 0x1fffe3, 21, 0x3ffffe6, 26, 0x7ffffe0, 27, 0x7ffffe1, 27, 0x3ffffe7, 26, 0x7ffffe2, 27, 0xfffff2, 24,
  0x1fffe4, 21, 0x1fffe5, 21, 0x3ffffe8, 26, 0x3ffffe9, 26, 0xffffffd, 28, 0x7ffffe3, 27, 0x7ffffe4, 27, 0x7ffffe5, 27,
  0xfffec, 20, 0xfffff3, 24, 0xfffed, 20, 0x1fffe6, 21, 0x3fffe9, 22, 0x1fffe7, 21, 0x1fffe8, 21, 0x7ffff3, 23,
  0x3fffea, 22, 0x3fffeb, 22, 0x1ffffee, 25, 0x1ffffef, 25, 0xfffff4, 24, 0xfffff5, 24, 0x3ffffea, 26, 0x7ffff4, 23,
  0x3ffffeb, 26, 0x7ffffe6, 27, 0x3ffffec, 26, 0x3ffffed, 26, 0x7ffffe7, 27, 0x7ffffe8, 27, 0x7ffffe9, 27, 0x7ffffea, 27,
  0x7ffffeb, 27, 0xffffffe, 28, 0x7ffffec, 27, 0x7ffffed, 27, 0x7ffffee, 27, 0x7ffffef, 27, 0x7fffff0, 27, 0x3ffffee, 26,
  0x3fffffff, 30,
];

export const EOS = 256;
const SYMBOLS = 257;

/** Code of each symbol (aligned to the least significant bit). */
export const HUFFMAN_CODES = new Uint32Array(SYMBOLS);
/** Length in bits of each symbol's code (5..30). */
export const HUFFMAN_LENGTHS = new Uint8Array(SYMBOLS);
for (let symbol = 0; symbol < SYMBOLS; symbol++) {
  HUFFMAN_CODES[symbol] = CODE_TABLE[symbol * 2]!;
  HUFFMAN_LENGTHS[symbol] = CODE_TABLE[symbol * 2 + 1]!;
}

/** Octets `value` takes Huffman-coded (a latin1 string: every char code is one octet). */
export function huffmanEncodedLength(value: string): number {
  let bits = 0;
  for (let i = 0; i < value.length; i++) bits += HUFFMAN_LENGTHS[value.charCodeAt(i) & 0xff]!;
  return (bits + 7) >>> 3;
}

/**
 * Writes `value` Huffman-coded into `out` at `offset` (room for huffmanEncodedLength(value) octets must be
 * there) and returns the offset after it. The last octet is padded with the most significant bits of EOS (ones).
 */
export function huffmanEncode(value: string, out: Uint8Array, offset: number): number {
  let pending = 0; // fewer than 8 bits waiting for their octet, right-aligned
  let pendingBits = 0;
  let at = offset;
  for (let i = 0; i < value.length; i++) {
    const symbol = value.charCodeAt(i) & 0xff;
    let code = HUFFMAN_CODES[symbol]!;
    let length = HUFFMAN_LENGTHS[symbol]!;
    if (length > 24) {
      // 7 pending bits + a 30-bit code would not fit a 32-bit integer: the high part first.
      const high = length - 16;
      pending = (pending << high) | (code >>> 16);
      pendingBits += high;
      while (pendingBits >= 8) {
        pendingBits -= 8;
        out[at++] = pending >>> pendingBits;
      }
      pending &= (1 << pendingBits) - 1;
      code &= 0xffff;
      length = 16;
    }
    pending = (pending << length) | code;
    pendingBits += length;
    while (pendingBits >= 8) {
      pendingBits -= 8;
      out[at++] = pending >>> pendingBits;
    }
    pending &= (1 << pendingBits) - 1;
  }
  if (pendingBits > 0) out[at++] = (pending << (8 - pendingBits)) | (0xff >>> pendingBits);
  return at;
}

/*
 * The decoding state machine. A state is an internal node of the code tree (256 of them, the root is 0); a
 * transition consumes 4 bits and yields the next state and at most one symbol (no code is shorter than 5 bits).
 * TRANSITIONS[state * 16 + nibble] packs: next state (bits 0-7), the symbol (bits 8-15), EMITS (bit 16), FAILS
 * (bit 17: the bits spelled EOS, which a string must not contain, §5.2).
 */
const EMITS = 1 << 16;
const FAILS = 1 << 17;
const TRANSITIONS = new Uint32Array(256 * 16);
/** 1 where a string may end in that state: at the root, or after 1 to 7 bits that are all ones (EOS's prefix). */
const ACCEPTS = new Uint8Array(256);

{
  // The tree: children of internal node n are CHILD[2n] (bit 0) and CHILD[2n+1] (bit 1); a leaf is -1 - symbol.
  const child = new Int32Array(256 * 2).fill(0);
  let nodes = 1;
  for (let symbol = 0; symbol < SYMBOLS; symbol++) {
    const code = HUFFMAN_CODES[symbol]!;
    const length = HUFFMAN_LENGTHS[symbol]!;
    let node = 0;
    for (let bit = length - 1; bit >= 0; bit--) {
      const slot = node * 2 + ((code >>> bit) & 1);
      if (bit === 0) {
        child[slot] = -1 - symbol;
      } else {
        if (child[slot] === 0) child[slot] = nodes++;
        node = child[slot]!;
      }
    }
  }
  // A node reached from the root by ones only, at depth 1..7, is where valid padding may stop.
  let node = 0;
  for (let depth = 1; depth <= 7; depth++) {
    node = child[node * 2 + 1]!;
    ACCEPTS[node] = 1;
  }
  ACCEPTS[0] = 1;
  for (let state = 0; state < 256; state++) {
    for (let nibble = 0; nibble < 16; nibble++) {
      let at = state;
      let entry = 0;
      for (let bit = 3; bit >= 0; bit--) {
        const next = child[at * 2 + ((nibble >>> bit) & 1)]!;
        if (next < 0) {
          const symbol = -1 - next;
          if (symbol === EOS) entry |= FAILS;
          else entry |= EMITS | (symbol << 8);
          at = 0;
        } else {
          at = next;
        }
      }
      TRANSITIONS[state * 16 + nibble] = entry | at;
    }
  }
}

/**
 * Decodes the Huffman-coded octets `input[start..end)` into `out` from 0 and returns the decoded length, or -1
 * when they are not a valid string (EOS inside, padding longer than 7 bits or not all ones). `out` must have room
 * for (end - start) * 8 / 5 octets.
 */
export function huffmanDecode(input: Uint8Array, start: number, end: number, out: Uint8Array): number {
  let state = 0;
  let length = 0;
  for (let i = start; i < end; i++) {
    const octet = input[i]!;
    let entry = TRANSITIONS[(state << 4) | (octet >>> 4)]!;
    if (entry & (EMITS | FAILS)) {
      if (entry & FAILS) return -1;
      out[length++] = entry >>> 8;
    }
    entry = TRANSITIONS[((entry & 0xff) << 4) | (octet & 0x0f)]!;
    if (entry & (EMITS | FAILS)) {
      if (entry & FAILS) return -1;
      out[length++] = entry >>> 8;
    }
    state = entry & 0xff;
  }
  return ACCEPTS[state] === 1 ? length : -1;
}
