/**
 * The protobuf wire format (protobuf.dev/programming-guides/encoding) for messages whose fields are all
 * `string`: the little the demo's Greeter needs, so neither the demo nor its client depends on a protobuf
 * library. Decoding skips fields of other wire types, as any protobuf parser skips unknown fields.
 */
export class ProtobufError extends Error {
  readonly code = 'ERR_PROTOBUF';
}

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH_DELIMITED = 2;
const WIRE_FIXED32 = 5;

function encodeVarint(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return bytes;
}

/** Fields in the order given; proto3 leaves an empty string off the wire. */
export function encodeStringFields(fields: readonly (readonly [number, string])[]): Buffer {
  const parts: Buffer[] = [];
  for (const [field, value] of fields) {
    if (value === '') continue;
    const text = Buffer.from(value, 'utf8');
    parts.push(
      Buffer.from([...encodeVarint(field * 8 + WIRE_LENGTH_DELIMITED), ...encodeVarint(text.length)]),
    );
    parts.push(text);
  }
  return Buffer.concat(parts);
}

/** Every length-delimited field as UTF-8 text, by field number; a repeated field keeps its last value. */
export function decodeStringFields(bytes: Uint8Array): Map<number, string> {
  const fields = new Map<number, string>();
  let offset = 0;
  const readVarint = (): number => {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const byte = bytes[offset++];
      if (byte === undefined) throw new ProtobufError('truncated varint');
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 0x80;
    }
    throw new ProtobufError('varint longer than 10 bytes');
  };
  const skip = (length: number): void => {
    if (offset + length > bytes.length) throw new ProtobufError('truncated field');
    offset += length;
  };
  while (offset < bytes.length) {
    const key = readVarint();
    const field = Math.floor(key / 8);
    const wireType = key % 8;
    if (field === 0) throw new ProtobufError('field number 0');
    if (wireType === WIRE_LENGTH_DELIMITED) {
      const length = readVarint();
      const start = offset;
      skip(length);
      fields.set(field, Buffer.from(bytes.buffer, bytes.byteOffset + start, length).toString('utf8'));
    } else if (wireType === WIRE_VARINT) readVarint();
    else if (wireType === WIRE_FIXED64) skip(8);
    else if (wireType === WIRE_FIXED32) skip(4);
    else throw new ProtobufError(`unsupported wire type ${wireType}`);
  }
  return fields;
}
