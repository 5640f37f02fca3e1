/**
 * Strings packed into one ArrayBuffer that a worker thread transfers without a copy; the receiving thread decodes
 * them one at a time, so that it can let its event loop run between them (a structured clone of thousands of
 * strings is one uninterrupted deserialisation on the receiving thread).
 */
export interface PackedTexts {
  readonly buffer: ArrayBuffer;
  /** End offset (bytes) of each text in `buffer`. */
  readonly ends: readonly number[];
}

export function packTexts(texts: readonly string[]): PackedTexts {
  const encoder = new TextEncoder();
  // UTF-8 takes at most 3 bytes per UTF-16 unit.
  let capacity = 0;
  for (const text of texts) capacity += text.length * 3;
  const bytes = new Uint8Array(capacity);
  const ends: number[] = [];
  let offset = 0;
  for (const text of texts) {
    offset += encoder.encodeInto(text, bytes.subarray(offset)).written;
    ends.push(offset);
  }
  return { buffer: bytes.buffer.slice(0, offset), ends };
}

/** Each text in order. */
export function* unpackTexts(packed: PackedTexts): Generator<string, void, void> {
  const bytes = new Uint8Array(packed.buffer);
  const decoder = new TextDecoder();
  let start = 0;
  for (const end of packed.ends) {
    yield decoder.decode(bytes.subarray(start, end));
    start = end;
  }
}
