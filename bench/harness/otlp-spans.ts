/**
 * Spans in an OTLP/HTTP protobuf export (`ExportTraceServiceRequest`): resource_spans (field 1) hold scope_spans
 * (field 2), which hold spans (field 2). Counted by walking the wire format, without decoding anything else;
 * undefined when the bytes are not a well-formed message.
 */
export function countOtlpSpans(body: Uint8Array): number | undefined {
  try {
    let spans = 0;
    for (const [rs, rsEnd] of lengthDelimited(body, 0, body.length, 1))
      for (const [ss, ssEnd] of lengthDelimited(body, rs, rsEnd, 2))
        for (const _ of lengthDelimited(body, ss, ssEnd, 2)) spans++;
    return spans;
  } catch {
    return undefined;
  }
}

/** [start, end) of each length-delimited field numbered `field` in the message at body[from, to). */
function* lengthDelimited(
  body: Uint8Array,
  from: number,
  to: number,
  field: number,
): Generator<readonly [number, number]> {
  let at = from;
  while (at < to) {
    const [tag, afterTag] = varint(body, at, to);
    at = afterTag;
    switch (tag % 8) {
      case 0:
        at = varint(body, at, to)[1];
        break;
      case 1:
        at += 8;
        break;
      case 2: {
        const [length, afterLength] = varint(body, at, to);
        const end = afterLength + length;
        if (end > to) throw new Error('field runs past its message');
        if (Math.floor(tag / 8) === field) yield [afterLength, end];
        at = end;
        break;
      }
      case 5:
        at += 4;
        break;
      default:
        throw new Error(`wire type ${tag % 8}`);
    }
    if (at > to) throw new Error('field runs past its message');
  }
}

/** A base-128 varint at body[at] and the offset after it (values past 2^53 lose precision, never read here). */
function varint(body: Uint8Array, at: number, to: number): readonly [number, number] {
  let value = 0;
  let scale = 1;
  for (let i = at; i < to && i < at + 10; i++) {
    const byte = body[i] ?? 0;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, i + 1];
    scale *= 128;
  }
  throw new Error('truncated varint');
}
