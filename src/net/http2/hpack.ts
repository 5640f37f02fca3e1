/**
 * HPACK, header compression for HTTP/2 (RFC 7541): the decoder and encoder one connection owns, and the error
 * that ends a connection with COMPRESSION_ERROR.
 */
export { HpackDecoder, type HpackDecoderOptions } from './hpack-decoder.ts';
export { HpackEncoder, type HpackEncoderOptions, maxBlockLength } from './hpack-encoder.ts';
export { HpackError } from './hpack-error.ts';
