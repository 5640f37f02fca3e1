/**
 * The HPACK encoder (RFC 7541): header fields in, one header block out. One per connection; blocks must be sent
 * in the order they were encoded (the peer's decoder replays our dynamic table).
 */
import { Buffer } from 'node:buffer';
import { ENTRY_OVERHEAD, INITIAL_TABLE_SIZE } from './hpack-decoder.ts';
import { huffmanEncode, huffmanEncodedLength } from './hpack-huffman.ts';
import { writeInteger } from './hpack-integer.ts';
import { Indexing, KNOWN_NAMES, type KnownName, STATIC_TABLE_LENGTH } from './hpack-static-table.ts';

export interface HpackEncoderOptions {
  /** The most this encoder uses of the peer's table (default 4096); 0 keeps no dynamic table. */
  readonly maxTableSize?: number;
  /**
   * Huffman-code the literals that enter the dynamic table, when that is shorter (default true). Literals sent
   * again with every message (not indexed) are always raw: bench/README.md, "Fourth pass: HPACK", measured
   * Huffman there at ~200 ns to encode and ~160 ns to decode a path for 6 octets saved, on every request.
   */
  readonly huffman?: boolean;
}

/** A cookie shorter than this is never indexed (nghttp2's rule). */
const SHORT_COOKIE = 20;
/** How many recent unindexed `:path` values are remembered. */
const RECENT_PATHS = 4;

/**
 * What the encoder knows of one name: its static entries and policy, and its dynamic table entries. Kept for
 * every name of KNOWN_NAMES once seen, and for any other name while it has entries in the table.
 */
interface NameState {
  readonly known: KnownName | undefined;
  /** The newest live entry with this name (0: none) and its value: a repeated field matches without a hash. */
  lastId: number;
  lastValue: string;
  /** Value to the id of the newest entry with that value, for every live entry with this name. */
  readonly idByValue: Map<string, number>;
}

/**
 * Header blocks are cut from slabs this large (or one block's size, if larger), shared by every encoder (encoding
 * is synchronous): not a slab per connection. A slab is never rewritten; blocks keep theirs alive.
 */
const SLAB_SIZE = 16 * 1024;
let slab = Buffer.allocUnsafe(0);
let slabUsed = 0;

export class HpackEncoder {
  private readonly ownMaxTableSize: number;
  private readonly huffman: boolean;
  /** The table size in effect at the peer's decoder once pending updates are sent. */
  private capacity: number;
  /** The smallest size since the last block: the next block signals it first when below `capacity` (§4.2). */
  private pendingMinimum: number;
  private updatePending: boolean;
  /**
   * The dynamic table. Entries have ids 1, 2, ... in insertion order; the live ones are
   * inserted - count + 1 .. inserted, entry id's HPACK index is 62 + inserted - id, its slot id & mask.
   */
  private names: string[] = new Array<string>(16).fill('');
  private values: string[] = new Array<string>(16).fill('');
  private mask = 15;
  private inserted = 0;
  private count = 0;
  private size = 0;
  private readonly states = new Map<string, NameState>();
  private readonly recentPaths: string[] = new Array<string>(RECENT_PATHS).fill('');
  private recentPathNext = 0;

  constructor(options: HpackEncoderOptions = {}) {
    this.ownMaxTableSize = options.maxTableSize ?? INITIAL_TABLE_SIZE;
    this.huffman = options.huffman ?? true;
    this.capacity = Math.min(this.ownMaxTableSize, INITIAL_TABLE_SIZE);
    this.pendingMinimum = this.capacity;
    this.updatePending = this.capacity !== INITIAL_TABLE_SIZE;
  }

  /** The peer's SETTINGS_HEADER_TABLE_SIZE: the next block starts with a table size update when it changes. */
  setPeerMaxTableSize(size: number): void {
    const capacity = Math.min(this.ownMaxTableSize, size);
    if (capacity === this.capacity && !this.updatePending) return;
    this.capacity = capacity;
    this.pendingMinimum = Math.min(this.pendingMinimum, capacity);
    this.updatePending = true;
  }

  /** Fields flat, [name0, value0, ...], names already lower-case. Returns one header block that stays valid. */
  encode(fields: readonly string[]): Buffer {
    const bound = maxBlockLength(fields);
    if (slabUsed + bound > slab.length) {
      slab = Buffer.allocUnsafe(Math.max(SLAB_SIZE, bound));
      slabUsed = 0;
    }
    const out = slab;
    const start = slabUsed;
    const end = this.encodeFields(fields, out, start);
    slabUsed = (end + 7) & ~7;
    return out.subarray(start, end);
  }

  /**
   * Like encode, but writes the block into `out` at `offset` (a frame buffer, after its frame header: no Buffer
   * is made per block) and returns where it ends. `out` must have maxBlockLength(fields) octets of room there.
   */
  encodeInto(fields: readonly string[], out: Buffer, offset: number): number {
    if (out.length - offset < maxBlockLength(fields)) throw new RangeError('no room for the header block');
    return this.encodeFields(fields, out, offset);
  }

  private encodeFields(fields: readonly string[], out: Buffer, offset: number): number {
    let at = offset;
    if (this.updatePending) {
      this.updatePending = false;
      this.evictTo(this.pendingMinimum);
      if (this.pendingMinimum < this.capacity) at = writeInteger(out, at, 5, 0x20, this.pendingMinimum);
      at = writeInteger(out, at, 5, 0x20, this.capacity);
      this.pendingMinimum = this.capacity;
    }
    for (let i = 0; i + 1 < fields.length; i += 2) at = this.encodeField(out, at, fields[i]!, fields[i + 1]!);
    return at;
  }

  private encodeField(out: Buffer, at: number, name: string, value: string): number {
    let state = this.states.get(name);
    if (state === undefined) {
      const known = KNOWN_NAMES.get(name);
      if (known !== undefined) {
        state = { known, lastId: 0, lastValue: '', idByValue: new Map() };
        this.states.set(name, state);
      }
    }
    const known = state?.known;
    if (known !== undefined) {
      const staticIndex = value === '' ? known.emptyIndex : (known.valueIndex?.get(value) ?? 0);
      if (staticIndex !== 0) return writeInteger(out, at, 7, 0x80, staticIndex);
    }
    const indexing = known === undefined ? Indexing.Normal : known.indexing;
    const sensitive =
      indexing === Indexing.Never || (indexing === Indexing.Cookie && value.length < SHORT_COOKIE);
    if (state !== undefined && state.lastId !== 0 && !sensitive) {
      const id = state.lastValue === value ? state.lastId : state.idByValue.get(value);
      if (id !== undefined) return writeInteger(out, at, 7, 0x80, this.indexOf(id));
    }
    let nameIndex = known === undefined ? 0 : known.nameIndex;
    if (nameIndex === 0 && state !== undefined && state.lastId !== 0) nameIndex = this.indexOf(state.lastId);
    let huffman = false;
    if (sensitive) {
      at = writeInteger(out, at, 4, 0x10, nameIndex);
    } else if (this.worthIndexing(indexing, nameIndex, name, value)) {
      at = writeInteger(out, at, 6, 0x40, nameIndex);
      this.insert(state, name, value);
      huffman = this.huffman;
    } else {
      at = writeInteger(out, at, 4, 0x00, nameIndex);
    }
    if (nameIndex === 0) at = writeString(out, at, name, huffman);
    return writeString(out, at, value, huffman);
  }

  private worthIndexing(indexing: Indexing, nameIndex: number, name: string, value: string): boolean {
    // nghttp2's rule: an entry over 3/4 of the table would evict nearly everything for one field.
    if ((name.length + value.length + ENTRY_OVERHEAD) * 4 > this.capacity * 3) return false;
    if (indexing === Indexing.Changing) return nameIndex === 0;
    if (indexing === Indexing.Path) {
      const paths = this.recentPaths;
      for (let i = 0; i < RECENT_PATHS; i++) if (paths[i] === value) return true;
      paths[this.recentPathNext] = value;
      this.recentPathNext = (this.recentPathNext + 1) % RECENT_PATHS;
      return false;
    }
    return true;
  }

  /** The dynamic table, newest entry first, flat [name, value, ...] (diagnostics and tests). */
  tableEntries(): string[] {
    const entries: string[] = [];
    for (let id = this.inserted; id > this.inserted - this.count; id--) {
      entries.push(this.names[id & this.mask]!, this.values[id & this.mask]!);
    }
    return entries;
  }

  /** The dynamic table's size (§4.1) and the size in effect at the peer. */
  tableSize(): { size: number; capacity: number } {
    return { size: this.size, capacity: this.capacity };
  }

  private indexOf(id: number): number {
    return STATIC_TABLE_LENGTH + 1 + this.inserted - id;
  }

  private insert(seen: NameState | undefined, name: string, value: string): void {
    const entrySize = name.length + value.length + ENTRY_OVERHEAD;
    this.evictTo(this.capacity - entrySize);
    if (this.count === this.names.length) this.grow();
    const id = ++this.inserted;
    const slot = id & this.mask;
    this.names[slot] = name;
    this.values[slot] = value;
    this.count++;
    this.size += entrySize;
    // Eviction above may have dropped the state of a name outside KNOWN_NAMES: look it up again then.
    let state = seen?.known !== undefined ? seen : this.states.get(name);
    if (state === undefined) {
      state = { known: undefined, lastId: 0, lastValue: '', idByValue: new Map() };
      this.states.set(name, state);
    }
    state.lastId = id;
    state.lastValue = value;
    state.idByValue.set(value, id);
  }

  private evictTo(size: number): void {
    while (this.size > size) {
      const id = this.inserted - this.count + 1;
      const slot = id & this.mask;
      const name = this.names[slot]!;
      const value = this.values[slot]!;
      this.size -= name.length + value.length + ENTRY_OVERHEAD;
      this.names[slot] = '';
      this.values[slot] = '';
      this.count--;
      const state = this.states.get(name)!;
      if (state.idByValue.get(value) === id) state.idByValue.delete(value);
      if (state.lastId === id) {
        // The oldest entry left with this name, if any (ids in idByValue are all live).
        state.lastId = 0;
        for (const [otherValue, otherId] of state.idByValue) {
          state.lastId = otherId;
          state.lastValue = otherValue;
          break;
        }
      }
      if (state.lastId === 0 && state.known === undefined) this.states.delete(name);
    }
  }

  private grow(): void {
    const length = this.names.length * 2;
    const names = new Array<string>(length).fill('');
    const values = new Array<string>(length).fill('');
    for (let id = this.inserted - this.count + 1; id <= this.inserted; id++) {
      names[id & (length - 1)] = this.names[id & this.mask]!;
      values[id & (length - 1)] = this.values[id & this.mask]!;
    }
    this.names = names;
    this.values = values;
    this.mask = length - 1;
  }
}

/**
 * The most octets a block of these fields can take: each string raw with a 5-octet length, a 3-octet index, and
 * two table size updates.
 */
export function maxBlockLength(fields: readonly string[]): number {
  let bound = 12;
  for (let i = 0; i < fields.length; i++) bound += fields[i]!.length + 8;
  return bound;
}

/** A string literal (§5.2): Huffman-coded when asked and shorter, else raw. */
function writeString(out: Buffer, at: number, text: string, huffman: boolean): number {
  const length = text.length;
  if (huffman && length > 0) {
    const coded = huffmanEncodedLength(text);
    if (coded < length) return huffmanEncode(text, out, writeInteger(out, at, 7, 0x80, coded));
  }
  at = writeInteger(out, at, 7, 0, length);
  if (length < 32) {
    for (let i = 0; i < length; i++) out[at + i] = text.charCodeAt(i);
    return at + length;
  }
  return at + out.write(text, at, length, 'latin1');
}
