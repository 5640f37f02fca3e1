/**
 * HTTP/2 frames (RFC 9113 §4, §6): types, flags, error codes, the incremental reader (bytes in, frames out, in
 * any chunk split), the writers of every frame type and the SETTINGS codec. No connection state here: what a
 * frame means to a stream or the connection is connection.ts's job.
 */

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const Flag = {
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20,
} as const;

export const ErrorCode = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  SETTINGS_TIMEOUT: 0x4,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  CONNECT_ERROR: 0xa,
  ENHANCE_YOUR_CALM: 0xb,
  INADEQUATE_SECURITY: 0xc,
  HTTP_1_1_REQUIRED: 0xd,
} as const;

const ERROR_NAMES: readonly string[] = Object.keys(ErrorCode);

/** The RFC's name of an error code (`PROTOCOL_ERROR`), or `0x..` for one it does not define. */
export function errorCodeName(code: number): string {
  return ERROR_NAMES[code] ?? `0x${code.toString(16)}`;
}

export const SettingId = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
  /** RFC 8441 (extended CONNECT). */
  ENABLE_CONNECT_PROTOCOL: 0x8,
} as const;

export const FRAME_HEADER_LENGTH = 9;
/** The client's first bytes on every HTTP/2 connection (RFC 9113 §3.4). */
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
export const DEFAULT_MAX_FRAME_SIZE = 16_384;
export const MAX_ALLOWED_FRAME_SIZE = 16_777_215;
export const DEFAULT_WINDOW_SIZE = 65_535;
export const MAX_WINDOW_SIZE = 2_147_483_647;
/** Stream ids and window increments are 31 bits; the top bit is reserved and ignored on receipt. */
const U31 = 0x7fff_ffff;

/**
 * A frame the peer must not have sent. `streamId` 0 is a connection error (GOAWAY), any other a stream error
 * (RST_STREAM on that stream, RFC 9113 §5.4).
 */
export class Http2ProtocolError extends Error {
  constructor(
    readonly code: number,
    readonly streamId: number,
    message: string,
  ) {
    super(message);
    this.name = 'Http2ProtocolError';
  }
}

function connectionError(code: number, message: string): Http2ProtocolError {
  return new Http2ProtocolError(code, 0, message);
}

/**
 * One frame as read. The reader reuses this object for every frame: read its fields inside `onFrame`. `payload`
 * itself stays valid after the callback (a view of the chunk it arrived in, or a buffer of its own when it
 * spanned chunks), so a DATA payload may be kept without copying.
 */
export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  /** The payload with padding (DATA, HEADERS, PUSH_PROMISE) and the priority fields (HEADERS) removed. */
  payload: Buffer;
  /** The payload's length on the wire, padding included: what DATA costs in flow control (§6.9.1). */
  wireLength: number;
  /** HEADERS with PRIORITY, or PRIORITY: the stream this one depends on; -1 when the frame has none. */
  dependsOn: number;
}

export interface FrameReaderOptions {
  /** Our SETTINGS_MAX_FRAME_SIZE: a larger frame is a connection FRAME_SIZE_ERROR (§4.2). */
  maxFrameSize?: number;
}

/**
 * Chunks in, frames out. Checks what a frame's header and length alone can tell (frame size, padding, the fixed
 * lengths of SETTINGS, PING, GOAWAY, WINDOW_UPDATE and RST_STREAM, the stream-0 rule of each type) and throws
 * Http2ProtocolError (always a connection error) for the first frame that breaks one; after a throw the reader is
 * spent.
 */
export class FrameReader {
  private maxFrameSize: number;
  private readonly header = Buffer.alloc(FRAME_HEADER_LENGTH);
  private headerHave = 0;
  /** The frame being assembled across chunks (its header read), or null between frames. */
  private partial: Buffer | null = null;
  private partialHave = 0;
  private readonly frame: Frame = {
    type: 0,
    flags: 0,
    streamId: 0,
    payload: Buffer.alloc(0),
    wireLength: 0,
    dependsOn: -1,
  };

  constructor(options: FrameReaderOptions = {}) {
    this.maxFrameSize = options.maxFrameSize ?? DEFAULT_MAX_FRAME_SIZE;
  }

  /** Takes effect for the next frame whose header is read (after the peer ACKed our SETTINGS). */
  setMaxFrameSize(size: number): void {
    this.maxFrameSize = size;
  }

  /** True when no frame is partly read: what a connection checks before it calls an end of input clean. */
  get idle(): boolean {
    return this.headerHave === 0 && this.partial === null;
  }

  /** Reads every whole frame in `chunk` (with what earlier chunks left), calling `onFrame` for each in order. */
  push(chunk: Buffer, onFrame: (frame: Frame) => void): void {
    let offset = 0;
    const end = chunk.length;
    while (offset < end) {
      if (this.partial !== null) {
        const want = this.partial.length - this.partialHave;
        const take = Math.min(want, end - offset);
        chunk.copy(this.partial, this.partialHave, offset, offset + take);
        this.partialHave += take;
        offset += take;
        if (this.partialHave < this.partial.length) return;
        const payload = this.partial;
        this.partial = null;
        this.partialHave = 0;
        this.deliver(this.header, 0, payload, onFrame);
        continue;
      }
      if (this.headerHave > 0 || end - offset < FRAME_HEADER_LENGTH) {
        const take = Math.min(FRAME_HEADER_LENGTH - this.headerHave, end - offset);
        chunk.copy(this.header, this.headerHave, offset, offset + take);
        this.headerHave += take;
        offset += take;
        if (this.headerHave < FRAME_HEADER_LENGTH) return;
        this.headerHave = 0;
        const length = this.checkLength(this.header, 0);
        if (end - offset >= length) {
          const payload = chunk.subarray(offset, offset + length);
          offset += length;
          this.deliver(this.header, 0, payload, onFrame);
        } else {
          this.partial = Buffer.allocUnsafe(length);
          this.partialHave = 0;
        }
        continue;
      }
      const length = this.checkLength(chunk, offset);
      if (end - offset - FRAME_HEADER_LENGTH >= length) {
        const start = offset + FRAME_HEADER_LENGTH;
        offset = start + length;
        this.deliver(chunk, offset - length - FRAME_HEADER_LENGTH, chunk.subarray(start, offset), onFrame);
      } else {
        chunk.copy(this.header, 0, offset, offset + FRAME_HEADER_LENGTH);
        offset += FRAME_HEADER_LENGTH;
        this.partial = Buffer.allocUnsafe(length);
        this.partialHave = 0;
      }
    }
  }

  private checkLength(source: Buffer, at: number): number {
    const length = (source[at]! << 16) | (source[at + 1]! << 8) | source[at + 2]!;
    if (length > this.maxFrameSize) {
      throw connectionError(
        ErrorCode.FRAME_SIZE_ERROR,
        `frame of ${length} bytes over the maximum ${this.maxFrameSize}`,
      );
    }
    return length;
  }

  private deliver(source: Buffer, at: number, raw: Buffer, onFrame: (frame: Frame) => void): void {
    const frame = this.frame;
    const type = source[at + 3]!;
    const flags = source[at + 4]!;
    const streamId = source.readUInt32BE(at + 5) & U31;
    frame.type = type;
    frame.flags = flags;
    frame.streamId = streamId;
    frame.wireLength = raw.length;
    frame.dependsOn = -1;
    frame.payload = raw;
    switch (type) {
      case FrameType.DATA:
        needStream(streamId, 'DATA');
        if (flags & Flag.PADDED) frame.payload = unpad(raw, 0);
        break;
      case FrameType.HEADERS: {
        needStream(streamId, 'HEADERS');
        let body = flags & Flag.PADDED ? unpad(raw, flags & Flag.PRIORITY ? 5 : 0) : raw;
        if (flags & Flag.PRIORITY) {
          if (body.length < 5)
            throw connectionError(ErrorCode.FRAME_SIZE_ERROR, 'HEADERS too short for PRIORITY');
          frame.dependsOn = body.readUInt32BE(0) & U31;
          body = body.subarray(5);
        }
        frame.payload = body;
        break;
      }
      case FrameType.PRIORITY:
        needStream(streamId, 'PRIORITY');
        // A PRIORITY of another length is a stream error (§6.3): delivered, `wireLength` tells the connection.
        if (raw.length === 5) frame.dependsOn = raw.readUInt32BE(0) & U31;
        break;
      case FrameType.RST_STREAM:
        needStream(streamId, 'RST_STREAM');
        fixedLength(raw, 4, 'RST_STREAM');
        break;
      case FrameType.SETTINGS:
        if (streamId !== 0) throw connectionError(ErrorCode.PROTOCOL_ERROR, 'SETTINGS on a stream');
        if (flags & Flag.ACK) {
          if (raw.length !== 0)
            throw connectionError(ErrorCode.FRAME_SIZE_ERROR, 'SETTINGS ACK with a payload');
        } else if (raw.length % 6 !== 0) {
          throw connectionError(ErrorCode.FRAME_SIZE_ERROR, 'SETTINGS length not a multiple of 6');
        }
        break;
      case FrameType.PUSH_PROMISE:
        needStream(streamId, 'PUSH_PROMISE');
        frame.payload = flags & Flag.PADDED ? unpad(raw, 4) : raw;
        if (frame.payload.length < 4)
          throw connectionError(ErrorCode.FRAME_SIZE_ERROR, 'PUSH_PROMISE too short');
        break;
      case FrameType.PING:
        if (streamId !== 0) throw connectionError(ErrorCode.PROTOCOL_ERROR, 'PING on a stream');
        fixedLength(raw, 8, 'PING');
        break;
      case FrameType.GOAWAY:
        if (streamId !== 0) throw connectionError(ErrorCode.PROTOCOL_ERROR, 'GOAWAY on a stream');
        if (raw.length < 8) throw connectionError(ErrorCode.FRAME_SIZE_ERROR, 'GOAWAY shorter than 8 bytes');
        break;
      case FrameType.WINDOW_UPDATE:
        fixedLength(raw, 4, 'WINDOW_UPDATE');
        break;
      case FrameType.CONTINUATION:
        needStream(streamId, 'CONTINUATION');
        break;
      default:
        // Unknown types are ignored (§4.1), but still delivered: a CONTINUATION sequence must not be broken by one.
        break;
    }
    onFrame(frame);
  }
}

function needStream(streamId: number, type: string): void {
  if (streamId === 0) throw connectionError(ErrorCode.PROTOCOL_ERROR, `${type} on stream 0`);
}

function fixedLength(raw: Buffer, length: number, type: string): void {
  if (raw.length !== length) {
    throw connectionError(ErrorCode.FRAME_SIZE_ERROR, `${type} of a length other than ${length}`);
  }
}

/** The payload without its Pad Length octet, the `skip` fixed octets kept at its head, and the padding. */
function unpad(raw: Buffer, fixed: number): Buffer {
  if (raw.length < 1) throw connectionError(ErrorCode.FRAME_SIZE_ERROR, 'padded frame without a Pad Length');
  const padLength = raw[0]!;
  if (padLength + 1 + fixed > raw.length) {
    throw connectionError(ErrorCode.PROTOCOL_ERROR, 'padding as long as the payload or longer');
  }
  return raw.subarray(1, raw.length - padLength);
}

// ---- writers ------------------------------------------------------------------------------------------------

/** Writes a frame header at `offset`; returns the offset after it. */
export function writeFrameHeader(
  target: Buffer,
  offset: number,
  length: number,
  type: number,
  flags: number,
  streamId: number,
): number {
  target[offset] = length >>> 16;
  target[offset + 1] = (length >>> 8) & 0xff;
  target[offset + 2] = length & 0xff;
  target[offset + 3] = type;
  target[offset + 4] = flags;
  target.writeUInt32BE(streamId & U31, offset + 5);
  return offset + FRAME_HEADER_LENGTH;
}

/** One frame of any type, payload copied after its header. */
export function encodeFrame(type: number, flags: number, streamId: number, payload?: Uint8Array): Buffer {
  const length = payload?.length ?? 0;
  const out = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + length);
  writeFrameHeader(out, 0, length, type, flags, streamId);
  if (payload !== undefined) out.set(payload, FRAME_HEADER_LENGTH);
  return out;
}

/** Optional padding (0-255 octets of zeros after the payload; the Pad Length octet is added). */
function padded(
  type: number,
  flags: number,
  streamId: number,
  fixed: Buffer | null,
  body: Uint8Array,
  padLength: number | undefined,
): Buffer {
  const pad = padLength ?? -1;
  if (pad > 255) throw new RangeError('padding over 255 octets');
  const fixedLength = fixed?.length ?? 0;
  const length = (pad >= 0 ? 1 + pad : 0) + fixedLength + body.length;
  const out = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + length);
  let at = writeFrameHeader(out, 0, length, type, pad >= 0 ? flags | Flag.PADDED : flags, streamId);
  if (pad >= 0) out[at++] = pad;
  if (fixed !== null) {
    out.set(fixed, at);
    at += fixedLength;
  }
  out.set(body, at);
  at += body.length;
  if (pad > 0) out.fill(0, at, at + pad);
  return out;
}

export function encodeData(
  streamId: number,
  data: Uint8Array,
  endStream: boolean,
  padLength?: number,
): Buffer {
  return padded(FrameType.DATA, endStream ? Flag.END_STREAM : 0, streamId, null, data, padLength);
}

export interface HeadersFrameOptions {
  endStream: boolean;
  /** The peer's SETTINGS_MAX_FRAME_SIZE: a longer block goes on in CONTINUATION frames. */
  maxFrameSize?: number;
  padLength?: number;
  /** Writes the PRIORITY fields (exclusive bit clear, this dependency, weight 16). */
  dependsOn?: number;
}

/** HEADERS, and CONTINUATION frames when the block is over the peer's maximum frame size, as one buffer. */
export function encodeHeaders(streamId: number, block: Uint8Array, options: HeadersFrameOptions): Buffer {
  const maxFrameSize = options.maxFrameSize ?? DEFAULT_MAX_FRAME_SIZE;
  let fixed: Buffer | null = null;
  let flags = options.endStream ? Flag.END_STREAM : 0;
  if (options.dependsOn !== undefined) {
    fixed = Buffer.alloc(5);
    fixed.writeUInt32BE(options.dependsOn & U31, 0);
    fixed[4] = 15;
    flags |= Flag.PRIORITY;
  }
  const overhead = (options.padLength !== undefined ? 1 + options.padLength : 0) + (fixed?.length ?? 0);
  const firstRoom = maxFrameSize - overhead;
  if (firstRoom < 0) throw new RangeError('padding larger than the maximum frame size');
  if (block.length <= firstRoom) {
    return padded(FrameType.HEADERS, flags | Flag.END_HEADERS, streamId, fixed, block, options.padLength);
  }
  const parts = [
    padded(FrameType.HEADERS, flags, streamId, fixed, block.subarray(0, firstRoom), options.padLength),
  ];
  for (let at = firstRoom; at < block.length; at += maxFrameSize) {
    const piece = block.subarray(at, Math.min(block.length, at + maxFrameSize));
    const last = at + maxFrameSize >= block.length;
    parts.push(encodeFrame(FrameType.CONTINUATION, last ? Flag.END_HEADERS : 0, streamId, piece));
  }
  return Buffer.concat(parts);
}

export function encodeContinuation(streamId: number, fragment: Uint8Array, endHeaders: boolean): Buffer {
  return encodeFrame(FrameType.CONTINUATION, endHeaders ? Flag.END_HEADERS : 0, streamId, fragment);
}

export function encodePriority(streamId: number, dependsOn: number, weight = 16, exclusive = false): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + 5);
  writeFrameHeader(out, 0, 5, FrameType.PRIORITY, 0, streamId);
  out.writeUInt32BE(((exclusive ? 0x8000_0000 : 0) | (dependsOn & U31)) >>> 0, FRAME_HEADER_LENGTH);
  out[FRAME_HEADER_LENGTH + 4] = weight - 1;
  return out;
}

export function encodeRstStream(streamId: number, code: number): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + 4);
  writeFrameHeader(out, 0, 4, FrameType.RST_STREAM, 0, streamId);
  out.writeUInt32BE(code >>> 0, FRAME_HEADER_LENGTH);
  return out;
}

export function encodePushPromise(streamId: number, promisedId: number, block: Uint8Array): Buffer {
  const fixed = Buffer.allocUnsafe(4);
  fixed.writeUInt32BE(promisedId & U31, 0);
  return padded(FrameType.PUSH_PROMISE, Flag.END_HEADERS, streamId, fixed, block, undefined);
}

export function encodePing(opaque: Uint8Array, ack: boolean): Buffer {
  if (opaque.length !== 8) throw new RangeError('PING data is 8 octets');
  return encodeFrame(FrameType.PING, ack ? Flag.ACK : 0, 0, opaque);
}

export function encodeGoaway(lastStreamId: number, code: number, debug?: Uint8Array): Buffer {
  const debugLength = debug?.length ?? 0;
  const out = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + 8 + debugLength);
  writeFrameHeader(out, 0, 8 + debugLength, FrameType.GOAWAY, 0, 0);
  out.writeUInt32BE(lastStreamId & U31, FRAME_HEADER_LENGTH);
  out.writeUInt32BE(code >>> 0, FRAME_HEADER_LENGTH + 4);
  if (debug !== undefined) out.set(debug, FRAME_HEADER_LENGTH + 8);
  return out;
}

export function encodeWindowUpdate(streamId: number, increment: number): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + 4);
  writeFrameHeader(out, 0, 4, FrameType.WINDOW_UPDATE, 0, streamId);
  out.writeUInt32BE(increment & U31, FRAME_HEADER_LENGTH);
  return out;
}

// ---- reading the fixed payloads ----------------------------------------------------------------------------

export function readRstStreamCode(payload: Buffer): number {
  return payload.readUInt32BE(0);
}

/** A WINDOW_UPDATE's increment (31 bits; 0 is the caller's PROTOCOL_ERROR to raise, §6.9). */
export function readWindowIncrement(payload: Buffer): number {
  return payload.readUInt32BE(0) & U31;
}

export interface Goaway {
  lastStreamId: number;
  code: number;
  debug: Buffer;
}

export function readGoaway(payload: Buffer): Goaway {
  return {
    lastStreamId: payload.readUInt32BE(0) & U31,
    code: payload.readUInt32BE(4),
    debug: payload.subarray(8),
  };
}

/** PUSH_PROMISE's promised stream id and its header block fragment. */
export function readPushPromise(payload: Buffer): { promisedId: number; fragment: Buffer } {
  return { promisedId: payload.readUInt32BE(0) & U31, fragment: payload.subarray(4) };
}

// ---- SETTINGS -----------------------------------------------------------------------------------------------

/** The values of SETTINGS (§6.5.2) an endpoint holds for itself or its peer. */
export interface Http2Settings {
  headerTableSize: number;
  enablePush: boolean;
  /** Infinity until a peer sets it: the RFC gives no initial limit. */
  maxConcurrentStreams: number;
  initialWindowSize: number;
  maxFrameSize: number;
  /** Infinity until a peer sets it. */
  maxHeaderListSize: number;
  enableConnectProtocol: boolean;
}

/** The values every connection starts from, before the peer's SETTINGS arrive (§6.5.2). */
export function initialSettings(): Http2Settings {
  return {
    headerTableSize: 4096,
    enablePush: true,
    maxConcurrentStreams: Number.POSITIVE_INFINITY,
    initialWindowSize: DEFAULT_WINDOW_SIZE,
    maxFrameSize: DEFAULT_MAX_FRAME_SIZE,
    maxHeaderListSize: Number.POSITIVE_INFINITY,
    enableConnectProtocol: false,
  };
}

/**
 * Applies a SETTINGS payload onto `settings` (in place, in wire order; unknown identifiers ignored, §6.5.2) and
 * throws the connection error a bad value calls for: ENABLE_PUSH or ENABLE_CONNECT_PROTOCOL other than 0/1 and
 * MAX_FRAME_SIZE outside 2^14..2^24-1 are PROTOCOL_ERROR, INITIAL_WINDOW_SIZE over 2^31-1 FLOW_CONTROL_ERROR.
 */
export function applySettings(settings: Http2Settings, payload: Buffer): void {
  for (let at = 0; at + 6 <= payload.length; at += 6) {
    const id = payload.readUInt16BE(at);
    const value = payload.readUInt32BE(at + 2);
    switch (id) {
      case SettingId.HEADER_TABLE_SIZE:
        settings.headerTableSize = value;
        break;
      case SettingId.ENABLE_PUSH:
        if (value > 1) throw connectionError(ErrorCode.PROTOCOL_ERROR, 'SETTINGS_ENABLE_PUSH not 0 or 1');
        settings.enablePush = value === 1;
        break;
      case SettingId.MAX_CONCURRENT_STREAMS:
        settings.maxConcurrentStreams = value;
        break;
      case SettingId.INITIAL_WINDOW_SIZE:
        if (value > MAX_WINDOW_SIZE) {
          throw connectionError(ErrorCode.FLOW_CONTROL_ERROR, 'SETTINGS_INITIAL_WINDOW_SIZE over 2^31-1');
        }
        settings.initialWindowSize = value;
        break;
      case SettingId.MAX_FRAME_SIZE:
        if (value < DEFAULT_MAX_FRAME_SIZE || value > MAX_ALLOWED_FRAME_SIZE) {
          throw connectionError(ErrorCode.PROTOCOL_ERROR, 'SETTINGS_MAX_FRAME_SIZE outside 2^14..2^24-1');
        }
        settings.maxFrameSize = value;
        break;
      case SettingId.MAX_HEADER_LIST_SIZE:
        settings.maxHeaderListSize = value;
        break;
      case SettingId.ENABLE_CONNECT_PROTOCOL:
        if (value > 1)
          throw connectionError(ErrorCode.PROTOCOL_ERROR, 'SETTINGS_ENABLE_CONNECT_PROTOCOL not 0 or 1');
        settings.enableConnectProtocol = value === 1;
        break;
      default:
        break;
    }
  }
}

/** One setting to send: the identifier and its value. */
export type SettingEntry = readonly [id: number, value: number];

/** A SETTINGS frame with these entries (an ACK when `entries` is omitted). */
export function encodeSettings(entries?: readonly SettingEntry[]): Buffer {
  if (entries === undefined) return encodeFrame(FrameType.SETTINGS, Flag.ACK, 0);
  const out = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + 6 * entries.length);
  writeFrameHeader(out, 0, 6 * entries.length, FrameType.SETTINGS, 0, 0);
  let at = FRAME_HEADER_LENGTH;
  for (const [id, value] of entries) {
    out.writeUInt16BE(id, at);
    out.writeUInt32BE(value >>> 0, at + 2);
    at += 6;
  }
  return out;
}
