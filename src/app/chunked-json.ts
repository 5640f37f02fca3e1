import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * A JSON value in pieces of about `maxBytes`, packed into one ArrayBuffer that a worker thread can transfer
 * without a copy. The receiving thread parses it a piece at a time and lets its event loop run between pieces:
 * a structured clone of a 10,000-route table is one uninterrupted deserialisation on the serving thread, these
 * pieces are ~64 KiB of JSON.parse each.
 *
 * A piece is `[path, op, json]`: `set` puts the value at `path`, `push` appends the array's items to the array
 * at `path`, `assign` copies the object's keys into the object at `path`. Objects and arrays too big for one
 * piece are sent as an empty shell and then their children, recursively; every other value goes whole.
 */
export interface ChunkedJson {
  readonly buffer: ArrayBuffer;
  /** End offset (bytes) of each piece in `buffer`. */
  readonly ends: readonly number[];
}

type Path = readonly (string | number)[];
type Piece = readonly [Path, 'set' | 'push' | 'assign', unknown];

export const DEFAULT_PIECE_BYTES = 64 * 1024;

/** Splits a JSON-safe value into pieces (the worker's side: its cost is off the serving thread). */
export function encodeChunked(value: unknown, maxBytes = DEFAULT_PIECE_BYTES): ChunkedJson {
  const texts: string[] = [];
  const emit = (piece: Piece): void => {
    texts.push(JSON.stringify(piece));
  };
  split([], value, JSON.stringify(value) ?? 'null', maxBytes, emit);
  const encoder = new TextEncoder();
  const encoded = texts.map((t) => encoder.encode(t));
  const total = encoded.reduce((n, b) => n + b.byteLength, 0);
  const bytes = new Uint8Array(total);
  const ends: number[] = [];
  let offset = 0;
  for (const b of encoded) {
    bytes.set(b, offset);
    offset += b.byteLength;
    ends.push(offset);
  }
  return { buffer: bytes.buffer, ends };
}

function split(path: Path, value: unknown, text: string, maxBytes: number, emit: (p: Piece) => void): void {
  if (text.length <= maxBytes || value === null || typeof value !== 'object') {
    emit([path, 'set', value]);
    return;
  }
  const isArray = Array.isArray(value);
  emit([path, 'set', isArray ? [] : {}]);
  const entries: [string | number, unknown][] = isArray
    ? value.map((v, i): [number, unknown] => [i, v])
    : Object.entries(value as Record<string, unknown>);
  let batch: [string | number, unknown][] = [];
  let batchBytes = 0;
  const flush = (): void => {
    if (batch.length === 0) return;
    emit(
      isArray
        ? [path, 'push', batch.map(([, v]) => v)]
        : [path, 'assign', Object.fromEntries(batch as [string, unknown][])],
    );
    batch = [];
    batchBytes = 0;
  };
  for (const [key, child] of entries) {
    // JSON drops undefined object values and writes undefined array items as null; so do the pieces.
    const childText = JSON.stringify(child) ?? 'null';
    if (childText.length > maxBytes) {
      flush();
      split([...path, key], child, childText, maxBytes, emit);
      continue;
    }
    if (batchBytes + childText.length > maxBytes) flush();
    batch.push([key, child]);
    batchBytes += childText.length + 8;
  }
  flush();
}

/**
 * Rebuilds the value, parsing pieces for about `sliceMs` at a time with the event loop free between slices
 * (0: all at once).
 */
export async function decodeChunked(chunked: ChunkedJson, sliceMs: number): Promise<unknown> {
  const bytes = new Uint8Array(chunked.buffer);
  const decoder = new TextDecoder();
  const root: { value?: unknown } = {};
  let start = 0;
  let sliceEnd = performance.now() + sliceMs;
  for (const end of chunked.ends) {
    const [path, op, value] = JSON.parse(decoder.decode(bytes.subarray(start, end))) as Piece;
    start = end;
    apply(root, path, op, value);
    if (sliceMs > 0 && performance.now() >= sliceEnd) {
      await nextTurn();
      sliceEnd = performance.now() + sliceMs;
    }
  }
  return root.value;
}

function apply(root: { value?: unknown }, path: Path, op: Piece[1], value: unknown): void {
  if (path.length === 0 && op === 'set') {
    root.value = value;
    return;
  }
  let target = root.value as Record<string | number, unknown>;
  const last = path.length - (op === 'set' ? 1 : 0);
  for (let i = 0; i < last; i++)
    target = target[path[i] as string | number] as Record<string | number, unknown>;
  if (op === 'set') target[path[path.length - 1] as string | number] = value;
  else if (op === 'push') (target as unknown as unknown[]).push(...(value as unknown[]));
  else Object.assign(target, value);
}
