/**
 * The HPACK decoder (RFC 7541): header blocks in, header fields out. One per connection (the dynamic table is
 * the connection's); a block must be whole (HEADERS and its CONTINUATIONs joined) and blocks decoded in order.
 */
import { Buffer } from 'node:buffer';
import { HpackError } from './hpack-error.ts';
import { huffmanDecode } from './hpack-huffman.ts';
import { STATIC_NAMES, STATIC_TABLE_LENGTH, STATIC_VALUES } from './hpack-static-table.ts';

/** The dynamic table size both ends start with (RFC 9113 §6.5.2, SETTINGS_HEADER_TABLE_SIZE's initial value). */
export const INITIAL_TABLE_SIZE = 4096;
/** What an entry costs beyond its name and value (RFC 7541 §4.1); the header list size counts it too. */
export const ENTRY_OVERHEAD = 32;
/** No HPACK integer of ours exceeds this (lengths, indexes and sizes all fit 31 bits). */
const MAX_INTEGER = 0x7fffffff;

/** Node's own latin1 slice on every Buffer (what toString('latin1', start, end) ends in, minus its checks). */
type Latin1Buffer = Buffer & { latin1Slice(start: number, end: number): string };
const EMPTY = Buffer.alloc(0) as Latin1Buffer;

/**
 * Huffman output, shared by every decoder (decoding is synchronous; strings are copied out of it): not a buffer
 * per connection.
 */
const HUFFMAN_SCRATCH = Buffer.allocUnsafe(8192) as Latin1Buffer;

/** Shorter strings are built in JS: for them the call into C++ that a slice makes costs more than the copy. */
const SHORT_STRING = 16;
/** One array of char codes for each short length, reused. */
const CHAR_CODES: number[][] = Array.from({ length: SHORT_STRING }, (_, length) =>
  new Array<number>(length).fill(0),
);

function latin1(buffer: Latin1Buffer, start: number, end: number): string {
  const length = end - start;
  if (length >= SHORT_STRING) return buffer.latin1Slice(start, end);
  const codes = CHAR_CODES[length]!;
  for (let i = 0; i < length; i++) codes[i] = buffer[start + i]!;
  return String.fromCharCode.apply(null, codes);
}

export interface HpackDecoderOptions {
  /** Our SETTINGS_HEADER_TABLE_SIZE: the most a table size update may ask for (default 4096). */
  readonly maxTableSize?: number;
  /** RFC 9113 §6.5.2: the most a decoded list may take (name + value + 32 per field). */
  readonly maxHeaderListSize: number;
}

export class HpackDecoder {
  private readonly maxTableSize: number;
  private readonly maxHeaderListSize: number;
  /** The size the peer's encoder set (a table size update); the protocol starts both ends at 4096. */
  private capacity = INITIAL_TABLE_SIZE;
  private size = 0;
  /**
   * The dynamic table as a ring: the newest entry (index 62) is at slot (next - 1) & mask, the oldest at
   * (next - count) & mask. Grows by doubling; 4096 octets hold at most 128 entries.
   */
  private names: string[] = new Array<string>(16).fill('');
  private values: string[] = new Array<string>(16).fill('');
  private mask = 15;
  private next = 0;
  private count = 0;
  // The block being decoded.
  private block = EMPTY;
  private pos = 0;
  private end = 0;

  constructor(options: HpackDecoderOptions) {
    this.maxTableSize = options.maxTableSize ?? INITIAL_TABLE_SIZE;
    this.maxHeaderListSize = options.maxHeaderListSize;
  }

  /**
   * One whole header block. Returns the fields flat in wire order, [name0, value0, ...], latin1 strings, names as
   * sent; `undefined` when the list is larger than maxHeaderListSize (the block is still decoded to its end, so
   * the dynamic table stays in sync). Throws HpackError for a malformed block.
   */
  decode(block: Uint8Array): string[] | undefined {
    this.block = (
      Buffer.isBuffer(block) ? block : Buffer.from(block.buffer, block.byteOffset, block.byteLength)
    ) as Latin1Buffer;
    this.pos = 0;
    this.end = block.length;
    try {
      return this.decodeFields();
    } finally {
      this.block = EMPTY;
    }
  }

  private decodeFields(): string[] | undefined {
    const fields: string[] = [];
    let listSize = 0;
    let fieldSeen = false;
    while (this.pos < this.end) {
      const first = this.block[this.pos]!;
      let name: string;
      let value: string;
      if (first & 0x80) {
        // Indexed field (§6.1); most indexes fit the prefix octet.
        const index = first !== 0xff ? first & 0x7f : this.readInteger(7);
        if (first !== 0xff) this.pos++;
        if (index === 0) throw new HpackError('indexed field with index 0');
        if (index <= STATIC_TABLE_LENGTH) {
          name = STATIC_NAMES[index - 1]!;
          value = STATIC_VALUES[index - 1]!;
        } else {
          const slot = this.dynamicSlot(index);
          name = this.names[slot]!;
          value = this.values[slot]!;
        }
      } else if (first & 0x40) {
        // Literal with incremental indexing (§6.2.1).
        const nameIndex = this.readInteger(6);
        name = nameIndex === 0 ? this.readString() : this.nameAt(nameIndex);
        value = this.readString();
        this.insert(name, value);
      } else if (first & 0x20) {
        // Dynamic table size update (§6.3): only before the block's first field (§4.2).
        if (fieldSeen) throw new HpackError('table size update after a header field');
        const size = this.readInteger(5);
        if (size > this.maxTableSize) {
          throw new HpackError(`table size update to ${size} above our limit ${this.maxTableSize}`);
        }
        this.capacity = size;
        this.evictTo(size);
        continue;
      } else {
        // Literal without indexing (0000xxxx, §6.2.2) or never indexed (0001xxxx, §6.2.3).
        const nameIndex = this.readInteger(4);
        name = nameIndex === 0 ? this.readString() : this.nameAt(nameIndex);
        value = this.readString();
      }
      fieldSeen = true;
      listSize += name.length + value.length + ENTRY_OVERHEAD;
      // Past the limit, the rest is still decoded (table in sync) but no longer kept: a block of indexed
      // references to a large entry cannot grow the list beyond the limit.
      if (listSize <= this.maxHeaderListSize) fields.push(name, value);
    }
    return listSize <= this.maxHeaderListSize ? fields : undefined;
  }

  /** The dynamic table, newest entry first, flat [name, value, ...] (diagnostics and tests). */
  tableEntries(): string[] {
    const entries: string[] = [];
    for (let age = 1; age <= this.count; age++) {
      const slot = (this.next - age) & this.mask;
      entries.push(this.names[slot]!, this.values[slot]!);
    }
    return entries;
  }

  /** The dynamic table's size (§4.1) and the size the peer's encoder set. */
  tableSize(): { size: number; capacity: number } {
    return { size: this.size, capacity: this.capacity };
  }

  /** An integer with an N-bit prefix (§5.1), the prefix's octet at pos. */
  private readInteger(prefixBits: number): number {
    const block = this.block;
    const mask = (1 << prefixBits) - 1;
    let value = block[this.pos++]! & mask;
    if (value < mask) return value;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.end) throw new HpackError('integer runs past the end of the block');
      const octet = block[this.pos++]!;
      value += (octet & 0x7f) * (1 << shift);
      if (value > MAX_INTEGER) throw new HpackError('integer above 2^31 - 1');
      if ((octet & 0x80) === 0) return value;
      shift += 7;
      if (shift > 28) throw new HpackError('integer longer than 5 continuation octets');
    }
  }

  /** A string literal (§5.2), raw or Huffman-coded, as a latin1 string. */
  private readString(): string {
    if (this.pos >= this.end) throw new HpackError('string literal missing at the end of the block');
    const huffman = this.block[this.pos]! & 0x80;
    const length = this.readInteger(7);
    const start = this.pos;
    const stop = start + length;
    if (stop > this.end) throw new HpackError('string literal runs past the end of the block');
    this.pos = stop;
    if (length === 0) return '';
    if (huffman === 0) return latin1(this.block, start, stop);
    // At most 8/5 octets out per octet in: no code is shorter than 5 bits.
    const room = ((length * 8) / 5 + 1) | 0;
    // A string longer than the shared scratch (a hostile 64 KiB literal) gets its own, dropped after.
    const out = room <= HUFFMAN_SCRATCH.length ? HUFFMAN_SCRATCH : (Buffer.allocUnsafe(room) as Latin1Buffer);
    const decoded = huffmanDecode(this.block, start, stop, out);
    if (decoded < 0) throw new HpackError('invalid Huffman string (EOS, or padding not 1 to 7 one bits)');
    return latin1(out, 0, decoded);
  }

  private nameAt(index: number): string {
    if (index <= STATIC_TABLE_LENGTH) return STATIC_NAMES[index - 1]!;
    return this.names[this.dynamicSlot(index)]!;
  }

  private dynamicSlot(index: number): number {
    const age = index - STATIC_TABLE_LENGTH; // 1 = newest
    if (age > this.count) throw new HpackError(`index ${index} past the end of the table`);
    return (this.next - age) & this.mask;
  }

  /** Adds an entry (§4.4): older entries leave until it fits; one larger than the table empties it. */
  private insert(name: string, value: string): void {
    const entrySize = name.length + value.length + ENTRY_OVERHEAD;
    if (entrySize > this.capacity) {
      this.evictTo(0);
      return;
    }
    this.evictTo(this.capacity - entrySize);
    if (this.count === this.names.length) this.grow();
    const slot = this.next;
    this.names[slot] = name;
    this.values[slot] = value;
    this.next = (slot + 1) & this.mask;
    this.count++;
    this.size += entrySize;
  }

  private evictTo(size: number): void {
    while (this.size > size) {
      const slot = (this.next - this.count) & this.mask;
      this.size -= this.names[slot]!.length + this.values[slot]!.length + ENTRY_OVERHEAD;
      this.names[slot] = '';
      this.values[slot] = '';
      this.count--;
    }
  }

  private grow(): void {
    const length = this.names.length * 2;
    const names = new Array<string>(length).fill('');
    const values = new Array<string>(length).fill('');
    for (let age = this.count; age >= 1; age--) {
      const slot = (this.next - age) & this.mask;
      names[this.count - age] = this.names[slot]!;
      values[this.count - age] = this.values[slot]!;
    }
    this.names = names;
    this.values = values;
    this.mask = length - 1;
    this.next = this.count;
  }
}
