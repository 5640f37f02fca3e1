/**
 * gRPC over HTTP/2 message framing (grpc/grpc PROTOCOL-HTTP2.md, "Length-Prefixed-Message"): a compressed
 * flag byte, a 4-byte big-endian length, then the message. The demo never compresses, so a compressed frame
 * is refused rather than decoded.
 */
export class GrpcFrameError extends Error {
  readonly code = 'ERR_GRPC_FRAME';
}

const HEADER_BYTES = 5;
/** gRPC's default receive limit (4 MiB); a longer frame is an error, not a buffer to grow. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

export function encodeGrpcFrame(message: Uint8Array): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32BE(message.length, 1);
  return Buffer.concat([header, message]);
}

/** Collects DATA chunks and hands out each complete message; frames may span chunks or share one. */
export class GrpcFrameReader {
  #pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const messages: Buffer[] = [];
    while (this.#pending.length >= HEADER_BYTES) {
      const compressed = this.#pending[0];
      const length = this.#pending.readUInt32BE(1);
      if (compressed !== 0) throw new GrpcFrameError('compressed messages are not supported');
      if (length > MAX_MESSAGE_BYTES)
        throw new GrpcFrameError(`message of ${length} bytes is over the limit`);
      if (this.#pending.length < HEADER_BYTES + length) break;
      messages.push(this.#pending.subarray(HEADER_BYTES, HEADER_BYTES + length));
      this.#pending = this.#pending.subarray(HEADER_BYTES + length);
    }
    return messages;
  }

  /** True when a frame was begun and not finished: the stream ended mid-message. */
  get partial(): boolean {
    return this.#pending.length > 0;
  }
}
