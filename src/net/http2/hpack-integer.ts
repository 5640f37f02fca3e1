/** HPACK's integers (RFC 7541 §5.1): N-bit prefix, then 7 bits an octet, least significant group first. */

/** Writes `value` with a `prefixBits`-bit prefix; `flags` fills the first octet's high bits. Returns the end. */
export function writeInteger(
  out: Uint8Array,
  at: number,
  prefixBits: number,
  flags: number,
  value: number,
): number {
  const mask = (1 << prefixBits) - 1;
  if (value < mask) {
    out[at] = flags | value;
    return at + 1;
  }
  out[at++] = flags | mask;
  let rest = value - mask;
  while (rest >= 0x80) {
    out[at++] = (rest & 0x7f) | 0x80;
    rest >>>= 7;
  }
  out[at] = rest;
  return at + 1;
}
