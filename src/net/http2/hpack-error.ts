/** A header block that cannot be decoded: the connection ends with COMPRESSION_ERROR (RFC 9113 §4.3). */
export class HpackError extends Error {
  override readonly name = 'HpackError';
}
