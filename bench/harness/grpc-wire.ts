import { SMALL_BODY } from './backend-content.ts';

/**
 * The one gRPC method the bench calls and the bytes on the wire. Messages are opaque bytes (identity codec,
 * no protobuf): what a proxy does with a unary call (HTTP/2 framing, headers, trailers) does not depend on
 * what the message means.
 */
export const GRPC_SERVICE = 'bench.Echo';
export const GRPC_METHOD_PATH = `/${GRPC_SERVICE}/Unary`;
export const GRPC_REQUEST = Buffer.from('ping from the bench gRPC client');
export const GRPC_REPLY = Buffer.from(SMALL_BODY);

/** A length-prefixed message: flag byte 0 (uncompressed), 4-byte big-endian length, the bytes. */
export function grpcFrame(message: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(5 + message.length);
  frame.writeUInt8(0, 0);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/** The messages of a complete body, or undefined when the body is cut or compressed. */
export function grpcMessages(body: Buffer): Buffer[] | undefined {
  const out: Buffer[] = [];
  let at = 0;
  while (at < body.length) {
    if (at + 5 > body.length || body.readUInt8(at) !== 0) return undefined;
    const length = body.readUInt32BE(at + 1);
    if (at + 5 + length > body.length) return undefined;
    out.push(body.subarray(at + 5, at + 5 + length));
    at += 5 + length;
  }
  return out;
}
