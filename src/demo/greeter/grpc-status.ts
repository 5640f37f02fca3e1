/** gRPC status codes (grpc/grpc doc/statuscodes.md) the demo's server and client speak of. */
export const GRPC_STATUS = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

const NAMES = new Map<number, string>(Object.entries(GRPC_STATUS).map(([name, code]) => [code, name]));

/** `14 UNAVAILABLE`; a code outside the table prints as a number alone. */
export function describeGrpcStatus(code: number): string {
  const name = NAMES.get(code);
  return name === undefined ? String(code) : `${code} ${name}`;
}

/**
 * `grpc-message` is percent-encoded UTF-8 (PROTOCOL-HTTP2.md): bytes outside printable ASCII, and `%`
 * itself, become `%XX`.
 */
export function encodeGrpcMessage(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The reverse of encodeGrpcMessage: each run of escapes is one UTF-8 sequence; text between stays as sent. */
export function decodeGrpcMessage(value: string): string {
  return value.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) =>
    Buffer.from(run.replaceAll('%', ''), 'hex').toString('utf8'),
  );
}
