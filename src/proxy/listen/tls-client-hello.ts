/**
 * Reads the server name (SNI, RFC 6066 §3) from a TLS ClientHello without terminating TLS, for passthrough
 * routing. The ClientHello may arrive split across TCP segments and across TLS records (RFC 8446 §5.1 lets a
 * handshake message span records), so the parser is fed the bytes received so far and says whether it needs
 * more. It never throws: malformed input is an `invalid` verdict with a reason.
 */

export type ClientHelloVerdict =
  | { readonly kind: 'incomplete' }
  /** `serverName` is lower-cased without a trailing dot; undefined when the client sent no SNI. */
  | { readonly kind: 'ok'; readonly serverName: string | undefined }
  | { readonly kind: 'invalid'; readonly reason: string };

export interface ClientHelloLimits {
  /** Largest ClientHello handshake message accepted; larger is `invalid` (default 16 KiB). */
  readonly maxBytes: number;
}

const RECORD_HANDSHAKE = 22;
const HANDSHAKE_CLIENT_HELLO = 1;
const EXTENSION_SERVER_NAME = 0;
/** RFC 8446 §5.1: a plaintext record fragment is at most 2^14 bytes. */
const MAX_RECORD_LENGTH = 16_384;
const INCOMPLETE: ClientHelloVerdict = { kind: 'incomplete' };

export const DEFAULT_CLIENT_HELLO_LIMITS: ClientHelloLimits = { maxBytes: 16_384 };

export function parseClientHello(
  data: Buffer,
  limits: ClientHelloLimits = DEFAULT_CLIENT_HELLO_LIMITS,
): ClientHelloVerdict {
  // Reassemble the handshake bytes carried by the leading handshake records.
  const fragments: Buffer[] = [];
  let handshakeBytes = 0;
  let offset = 0;
  let needed = -1;
  while (needed < 0 || handshakeBytes < needed) {
    if (data.length < offset + 5) return INCOMPLETE;
    if (data[offset] !== RECORD_HANDSHAKE) return invalid('not a TLS handshake record');
    if (data[offset + 1] !== 3) return invalid('not a TLS record version');
    const length = data.readUInt16BE(offset + 3);
    if (length === 0 || length > MAX_RECORD_LENGTH) return invalid(`record length ${length}`);
    if (data.length < offset + 5 + length) {
      // The handshake header may already tell the message is too large; refuse early.
      if (needed < 0 && handshakeBytes === 0 && data.length >= offset + 9) {
        const declared = data.readUIntBE(offset + 6, 3);
        if (declared > limits.maxBytes) return invalid(`ClientHello of ${declared} bytes over the limit`);
      }
      return INCOMPLETE;
    }
    const fragment = data.subarray(offset + 5, offset + 5 + length);
    fragments.push(fragment);
    handshakeBytes += fragment.length;
    offset += 5 + length;
    if (needed < 0 && handshakeBytes >= 4) {
      const head = fragments.length === 1 ? fragment : Buffer.concat(fragments);
      if (head[0] !== HANDSHAKE_CLIENT_HELLO) return invalid('first handshake message is not a ClientHello');
      const declared = head.readUIntBE(1, 3);
      if (declared > limits.maxBytes) return invalid(`ClientHello of ${declared} bytes over the limit`);
      needed = 4 + declared;
    }
  }
  const message = fragments.length === 1 ? (fragments[0] as Buffer) : Buffer.concat(fragments);
  return readServerName(message.subarray(4, needed));
}

/** ClientHello body (RFC 8446 §4.1.2): version, random, session id, cipher suites, compression, extensions. */
function readServerName(body: Buffer): ClientHelloVerdict {
  let p = 2 + 32;
  if (body.length < p + 1) return invalid('truncated ClientHello');
  p += 1 + (body[p] as number);
  if (body.length < p + 2) return invalid('truncated cipher suites');
  p += 2 + body.readUInt16BE(p);
  if (body.length < p + 1) return invalid('truncated compression methods');
  p += 1 + (body[p] as number);
  if (body.length === p) return { kind: 'ok', serverName: undefined };
  if (body.length < p + 2) return invalid('truncated extensions');
  const end = p + 2 + body.readUInt16BE(p);
  if (end > body.length) return invalid('extensions overrun the ClientHello');
  p += 2;
  while (p + 4 <= end) {
    const type = body.readUInt16BE(p);
    const length = body.readUInt16BE(p + 2);
    p += 4;
    if (p + length > end) return invalid('extension overruns the extensions');
    if (type === EXTENSION_SERVER_NAME) return readServerNameList(body.subarray(p, p + length));
    p += length;
  }
  return { kind: 'ok', serverName: undefined };
}

function readServerNameList(ext: Buffer): ClientHelloVerdict {
  if (ext.length < 2) return invalid('empty server_name extension');
  const end = 2 + ext.readUInt16BE(0);
  if (end > ext.length) return invalid('server_name list overruns the extension');
  let p = 2;
  while (p + 3 <= end) {
    const nameType = ext[p] as number;
    const length = ext.readUInt16BE(p + 1);
    p += 3;
    if (p + length > end) return invalid('server name overruns the list');
    if (nameType === 0) {
      const name = normalizeServerName(ext.subarray(p, p + length).toString('latin1'));
      return name === undefined
        ? invalid('server name is not a DNS hostname')
        : { kind: 'ok', serverName: name };
    }
    p += length;
  }
  return { kind: 'ok', serverName: undefined };
}

const HOSTNAME =
  /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** RFC 6066: a DNS hostname, case-insensitive, without a trailing dot (one is tolerated and dropped). */
export function normalizeServerName(raw: string): string | undefined {
  const lower = raw.toLowerCase();
  const name = lower.endsWith('.') ? lower.slice(0, -1) : lower;
  return HOSTNAME.test(name) ? name : undefined;
}

function invalid(reason: string): ClientHelloVerdict {
  return { kind: 'invalid', reason };
}
