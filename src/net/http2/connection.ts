/**
 * One HTTP/2 connection on the project's own codec, either role (RFC 9113): preface, SETTINGS and their ACK,
 * PING, GOAWAY, flow control both ways, the stream table and states, header blocks with CONTINUATION, HPACK
 * per connection and the limits that keep a hostile peer's cost its own. Bytes in through `receive`, bytes out
 * through the Http2Transport, gathered and written once per event-loop turn. No sockets here
 * (socket-transport.ts), no HTTP semantics beyond the frame layer (the server side and the upstream pool).
 */
import { flushAtEndOfPoll, type HeldWrite } from '../end-of-poll.ts';
import type {
  Http2ConnectionEnd,
  Http2ConnectionHandler,
  Http2ConnectionOptions,
  Http2Limits,
  Http2Stream,
  Http2StreamApi,
  Http2StreamHandler,
  Http2StreamReset,
  Http2Transport,
} from './connection-api.ts';
import {
  applySettings,
  CLIENT_PREFACE,
  DEFAULT_WINDOW_SIZE,
  ErrorCode,
  encodeGoaway,
  encodeHeaders,
  encodePing,
  encodeRstStream,
  encodeSettings,
  encodeWindowUpdate,
  errorCodeName,
  Flag,
  FRAME_HEADER_LENGTH,
  type Frame,
  FrameReader,
  FrameType,
  Http2ProtocolError,
  type Http2Settings,
  initialSettings,
  MAX_WINDOW_SIZE,
  readGoaway,
  readRstStreamCode,
  readWindowIncrement,
  type SettingEntry,
  SettingId,
  writeFrameHeader,
} from './frames.ts';
import { HpackDecoder, HpackEncoder, HpackError, maxBlockLength } from './hpack.ts';

export type * from './connection-api.ts';

export const DEFAULT_LIMITS: Readonly<Http2Limits> = {
  maxConcurrentStreams: 100,
  initialWindowSize: 65_535,
  connectionWindowSize: 1 << 20,
  maxFrameSize: 16_384,
  headerTableSize: 4096,
  maxHeaderListSize: 65_536,
  maxHeaderFields: 1000,
  maxHeaderBlockBytes: 128 * 1024,
  maxContinuationFrames: 64,
  maxQueuedControlFrames: 1000,
  maxResetsPerWindow: 1000,
  maxEmptyFramesPerWindow: 1000,
  floodWindowMs: 10_000,
  maxBufferedOutput: 256 * 1024,
};

/** Unsent bytes a stream holds before `sendData` asks its writer to wait for `drain`. */
const STREAM_HIGH_WATER = 64 * 1024;

/** Counts events in a fixed window of time; over the limit is a flood. */
class FloodCounter {
  private count = 0;
  private windowStart = 0;
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** Counts one; true when the window now holds more than the limit. */
  hit(): boolean {
    const now = this.now();
    if (now - this.windowStart >= this.windowMs) {
      this.windowStart = now;
      this.count = 0;
    }
    return ++this.count > this.limit;
  }
}

/** A connection error raised inside frame handling; `receive` turns it into GOAWAY. */
function fail(code: number, message: string): never {
  throw new Http2ProtocolError(code, 0, message);
}

/** A stream of an Http2Connection (its public face is Http2Stream, connection-api.ts). */
export class ConnectionStream implements Http2StreamApi {
  handler: Http2StreamHandler | null = null;
  owner: unknown = null;
  /** What we may still send (the peer's window for this stream). */
  sendWindow: number;
  /** What the peer may still send before our WINDOW_UPDATE. */
  recvWindow: number;
  /** Received bytes passed on by the owner and not yet given back in a WINDOW_UPDATE. */
  private unacked = 0;
  /** Client role: the final (non-1xx) response headers arrived; server role: always true. */
  finalHeadersReceived: boolean;
  private queue: Buffer[] = [];
  private queueHead = 0;
  private queuedBytes = 0;
  private pendingTrailers: readonly string[] | null = null;
  /** Our END_STREAM is queued (after the queued body and trailers). */
  private endQueued = false;
  /** Our END_STREAM went out. */
  endWritten = false;
  private remoteEnded = false;
  private done = false;
  inSendList = false;
  wantsDrain = false;
  /** `abandonInput` was called: RST_STREAM(NO_ERROR) follows our END_STREAM. */
  inputAbandoned = false;

  constructor(
    readonly id: number,
    private readonly connection: Http2Connection,
    sendWindow: number,
    recvWindow: number,
    locallyInitiated: boolean,
  ) {
    this.sendWindow = sendWindow;
    this.recvWindow = recvWindow;
    this.finalHeadersReceived = !locallyInitiated;
  }

  get bufferedLength(): number {
    return this.queuedBytes;
  }
  get sentEnd(): boolean {
    return this.endQueued;
  }
  get receivedEnd(): boolean {
    return this.remoteEnded;
  }
  get closed(): boolean {
    return this.done;
  }

  sendHeaders(fields: readonly string[], endStream: boolean): void {
    if (this.done || this.endQueued) return;
    if (endStream) this.endQueued = true;
    this.connection.writeHeaders(this, fields, endStream);
  }

  sendData(chunk: Buffer, endStream: boolean): boolean {
    if (this.done || this.endQueued) return false;
    if (chunk.length > 0) {
      this.queue.push(chunk);
      this.queuedBytes += chunk.length;
    }
    if (endStream) this.endQueued = true;
    this.connection.wantToSend(this);
    if (this.queuedBytes > STREAM_HIGH_WATER || this.connection.outputBlocked) {
      this.connection.waitForDrain(this);
      return false;
    }
    return true;
  }

  sendTrailers(fields: readonly string[]): void {
    if (this.done || this.endQueued) return;
    this.pendingTrailers = fields;
    this.endQueued = true;
    this.connection.wantToSend(this);
  }

  end(): void {
    this.sendData(EMPTY, true);
  }

  reset(code: number = ErrorCode.CANCEL): void {
    if (this.done) return;
    this.connection.resetStream(this, code, false);
  }

  abandonInput(): void {
    if (this.done || this.remoteEnded) return;
    this.inputAbandoned = true;
    if (this.endWritten) this.connection.resetStream(this, ErrorCode.NO_ERROR, true);
  }

  consumed(bytes: number): void {
    if (this.done || this.remoteEnded || bytes <= 0) return;
    this.unacked += bytes;
    const window = this.connection.localInitialWindow;
    if (this.unacked >= window >>> 1) {
      this.recvWindow += this.unacked;
      this.connection.queueControl(encodeWindowUpdate(this.id, this.unacked));
      this.unacked = 0;
    }
  }

  /** The peer's END_STREAM arrived. */
  markRemoteEnd(): void {
    this.remoteEnded = true;
  }

  markDone(): void {
    this.done = true;
    this.queue = [];
    this.queueHead = 0;
    this.queuedBytes = 0;
    this.pendingTrailers = null;
  }

  /** Something to frame: queued bytes, trailers, or an END_STREAM not yet written. */
  get hasPending(): boolean {
    return !this.done && (this.queuedBytes > 0 || (this.endQueued && !this.endWritten));
  }

  /**
   * Frames up to one frame of queued bytes into `out` within `limit` (window and frame size); writes trailers or
   * the END_STREAM once the queue is empty. Returns the DATA bytes framed (counted against the windows).
   */
  frameNext(
    out: Buffer[],
    limit: number,
    headers: (id: number, fields: readonly string[], endStream: boolean) => Buffer,
  ): number {
    if (this.queuedBytes > 0) {
      if (limit <= 0) return 0;
      const chunk = this.queue[this.queueHead]!;
      const take = Math.min(limit, chunk.length);
      const piece = take === chunk.length ? chunk : chunk.subarray(0, take);
      if (take === chunk.length) {
        this.queue[this.queueHead++] = EMPTY;
        if (this.queueHead === this.queue.length) {
          this.queue.length = 0;
          this.queueHead = 0;
        }
      } else {
        this.queue[this.queueHead] = chunk.subarray(take);
      }
      this.queuedBytes -= take;
      const last = this.queuedBytes === 0 && this.endQueued && this.pendingTrailers === null;
      const header = Buffer.allocUnsafe(FRAME_HEADER_LENGTH);
      writeFrameHeader(header, 0, take, FrameType.DATA, last ? Flag.END_STREAM : 0, this.id);
      out.push(header, piece);
      if (last) this.endWritten = true;
      return take;
    }
    if (this.endQueued && !this.endWritten) {
      this.endWritten = true;
      if (this.pendingTrailers !== null) {
        out.push(headers(this.id, this.pendingTrailers, true));
        this.pendingTrailers = null;
      } else {
        const header = Buffer.allocUnsafe(FRAME_HEADER_LENGTH);
        writeFrameHeader(header, 0, 0, FrameType.DATA, Flag.END_STREAM, this.id);
        out.push(header);
      }
    }
    return 0;
  }
}

const EMPTY = Buffer.alloc(0);

/** HEADERS frames of all connections are written into this slab, each frame a view that stays valid. */
const HEADER_SLAB_SIZE = 16 * 1024;
let headerSlab = Buffer.allocUnsafe(HEADER_SLAB_SIZE);
let headerSlabUsed = 0;

export class Http2Connection implements HeldWrite {
  readonly role: 'server' | 'client';
  /** The peer's SETTINGS as they stand (the RFC's initial values until its first SETTINGS). */
  readonly remoteSettings: Http2Settings = initialSettings();
  readonly limits: Readonly<Http2Limits>;
  private readonly transport: Http2Transport;
  private readonly connectionHandler: Http2ConnectionHandler;
  private readonly now: () => number;
  private readonly schedule: (flush: () => void) => void;
  private readonly reader: FrameReader;
  private readonly decoder: HpackDecoder;
  private readonly encoder: HpackEncoder;

  private readonly streams = new Map<number, ConnectionStream>();
  /** Streams with bytes, trailers or an END_STREAM to frame, in the order they asked. */
  private sendList: ConnectionStream[] = [];
  private drainWaiters: ConnectionStream[] = [];
  private out: Buffer[] = [];
  private outBytes = 0;
  private flushScheduled = false;
  private readonly flushBound = () => this.flushHeld();
  /** Trailers framed by a stream (`frameNext`): one function per connection, not one per stream and flush. */
  private readonly headerFramesBound = (id: number, fields: readonly string[], endStream: boolean) =>
    this.headerFrames(id, fields, endStream);

  /** Server: the client preface bytes still to match. */
  private prefaceLeft: number;
  private awaitingFirstSettings = true;
  private settingsAcked = false;
  private remoteSettingsSeen = false;
  /** The highest stream id the peer opened. */
  private lastPeerStreamId = 0;
  /** Client role: the next stream id we open. */
  private nextStreamId: number;
  private peerStreamsOpen = 0;
  private localStreamsOpen = 0;

  private connSendWindow = DEFAULT_WINDOW_SIZE;
  private connRecvWindow = DEFAULT_WINDOW_SIZE;
  private connUnacked = 0;

  /** The stream whose header block is being continued (0: none), its fragments and counts. */
  private blockStreamId = 0;
  private blockParts: Buffer[] = [];
  private blockBytes = 0;
  private blockFrames = 0;
  private blockEndStream = false;

  private blocked = false;
  private controlWhileBlocked = 0;
  private readonly resets: FloodCounter;
  private readonly emptyFrames: FloodCounter;
  private readonly pings = new Map<string, () => void>();
  private pingCounter = 0;

  /** Peer streams we reset lately: a header block still in flight on one is ignored, not an error. */
  private readonly recentlyReset: number[] = [];
  private goawaySent = false;
  private goawayReceived = false;
  private finished = false;
  private endReason: Http2ConnectionEnd | null = null;

  constructor(options: Http2ConnectionOptions) {
    this.role = options.role;
    this.transport = options.transport;
    this.connectionHandler = options.handler;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.now = options.now ?? Date.now;
    this.schedule = options.scheduleFlush ?? ((flush) => flushAtEndOfPoll({ flushHeld: flush }));
    this.reader = new FrameReader({ maxFrameSize: this.limits.maxFrameSize });
    this.decoder = new HpackDecoder({
      maxTableSize: this.limits.headerTableSize,
      maxHeaderListSize: this.limits.maxHeaderListSize,
    });
    this.encoder = new HpackEncoder();
    this.resets = new FloodCounter(this.limits.maxResetsPerWindow, this.limits.floodWindowMs, this.now);
    this.emptyFrames = new FloodCounter(
      this.limits.maxEmptyFramesPerWindow,
      this.limits.floodWindowMs,
      this.now,
    );
    this.prefaceLeft = this.role === 'server' ? CLIENT_PREFACE.length : 0;
    this.nextStreamId = 1;

    const limits = this.limits;
    const settings: SettingEntry[] = [
      [SettingId.MAX_CONCURRENT_STREAMS, limits.maxConcurrentStreams],
      [SettingId.INITIAL_WINDOW_SIZE, limits.initialWindowSize],
      [SettingId.MAX_HEADER_LIST_SIZE, limits.maxHeaderListSize],
    ];
    if (this.role === 'client') settings.unshift([SettingId.ENABLE_PUSH, 0]);
    if (limits.maxFrameSize !== 16_384) settings.push([SettingId.MAX_FRAME_SIZE, limits.maxFrameSize]);
    if (limits.headerTableSize !== 4096) settings.push([SettingId.HEADER_TABLE_SIZE, limits.headerTableSize]);
    if (options.enableConnectProtocol === true) settings.push([SettingId.ENABLE_CONNECT_PROTOCOL, 1]);
    if (this.role === 'client') this.push(CLIENT_PREFACE);
    this.push(encodeSettings(settings));
    if (limits.connectionWindowSize > DEFAULT_WINDOW_SIZE) {
      this.push(encodeWindowUpdate(0, limits.connectionWindowSize - DEFAULT_WINDOW_SIZE));
      this.connRecvWindow = limits.connectionWindowSize;
    }
    this.scheduleFlush();
  }

  get handler(): Http2ConnectionHandler {
    return this.connectionHandler;
  }

  /** The window each stream we receive on starts with and is topped up to. */
  get localInitialWindow(): number {
    return this.limits.initialWindowSize;
  }

  /** Output is over its bound: streams' DATA waits. */
  get outputBlocked(): boolean {
    return this.blocked;
  }

  get activeStreams(): number {
    return this.streams.size;
  }

  get canRequest(): boolean {
    return (
      this.role === 'client' &&
      !this.finished &&
      !this.goawaySent &&
      !this.goawayReceived &&
      this.localStreamsOpen < this.remoteSettings.maxConcurrentStreams &&
      this.nextStreamId <= 0x7fff_ffff
    );
  }

  /** The peer's SETTINGS arrived at least once. */
  get ready(): boolean {
    return this.remoteSettingsSeen;
  }

  get isClosed(): boolean {
    return this.finished;
  }

  // ---- input --------------------------------------------------------------------------------------------------

  /** Bytes from the transport. A protocol error sends GOAWAY and closes; it never throws. */
  receive(chunk: Buffer): void {
    if (this.finished) return;
    try {
      if (this.prefaceLeft > 0) {
        const start = CLIENT_PREFACE.length - this.prefaceLeft;
        const take = Math.min(this.prefaceLeft, chunk.length);
        if (!chunk.subarray(0, take).equals(CLIENT_PREFACE.subarray(start, start + take))) {
          fail(ErrorCode.PROTOCOL_ERROR, 'not the HTTP/2 client preface');
        }
        this.prefaceLeft -= take;
        if (take === chunk.length) return;
        chunk = chunk.subarray(take);
      }
      this.reader.push(chunk, this.onFrameBound);
    } catch (error) {
      if (error instanceof Http2ProtocolError) this.destroy(error.code, error.message);
      else if (error instanceof HpackError) this.destroy(ErrorCode.COMPRESSION_ERROR, error.message);
      else this.destroy(ErrorCode.INTERNAL_ERROR, error instanceof Error ? error.message : String(error));
    }
  }

  private readonly onFrameBound = (frame: Frame) => this.onFrame(frame);

  private onFrame(frame: Frame): void {
    if (this.finished) return;
    const type = frame.type;
    if (this.awaitingFirstSettings) {
      if (type !== FrameType.SETTINGS || (frame.flags & Flag.ACK) !== 0) {
        fail(ErrorCode.PROTOCOL_ERROR, 'the first frame is not SETTINGS');
      }
      this.awaitingFirstSettings = false;
    }
    if (this.blockStreamId !== 0 && type !== FrameType.CONTINUATION) {
      fail(ErrorCode.PROTOCOL_ERROR, 'a header block interrupted by another frame');
    }
    switch (type) {
      case FrameType.DATA:
        this.onData(frame);
        break;
      case FrameType.HEADERS:
        this.onHeaders(frame);
        break;
      case FrameType.CONTINUATION:
        this.onContinuation(frame);
        break;
      case FrameType.PRIORITY:
        if (frame.wireLength !== 5) this.streamError(frame.streamId, ErrorCode.FRAME_SIZE_ERROR);
        else if (frame.dependsOn === frame.streamId)
          this.streamError(frame.streamId, ErrorCode.PROTOCOL_ERROR);
        break;
      case FrameType.RST_STREAM:
        this.onRstStream(frame);
        break;
      case FrameType.SETTINGS:
        this.onSettings(frame);
        break;
      case FrameType.PUSH_PROMISE:
        fail(ErrorCode.PROTOCOL_ERROR, 'PUSH_PROMISE (push is disabled)');
        break;
      case FrameType.PING:
        this.onPing(frame);
        break;
      case FrameType.GOAWAY:
        this.onGoaway(frame);
        break;
      case FrameType.WINDOW_UPDATE:
        this.onWindowUpdate(frame);
        break;
      default:
        break;
    }
  }

  /** A stream id the peer could open next (idle: no frame but HEADERS or PRIORITY may name it). */
  private isIdle(id: number): boolean {
    const peerOpens = (id & 1) === (this.role === 'server' ? 1 : 0);
    return peerOpens ? id > this.lastPeerStreamId : id >= this.nextStreamId;
  }

  private onData(frame: Frame): void {
    const id = frame.streamId;
    const length = frame.wireLength;
    if (length > this.connRecvWindow) fail(ErrorCode.FLOW_CONTROL_ERROR, 'DATA beyond the connection window');
    this.connRecvWindow -= length;
    // The connection window is given back on receipt (each stream's own window holds the backpressure), so one
    // slow stream never stalls the others.
    this.connUnacked += length;
    if (this.connUnacked >= this.limits.connectionWindowSize >>> 1) {
      this.connRecvWindow += this.connUnacked;
      this.queueControl(encodeWindowUpdate(0, this.connUnacked));
      this.connUnacked = 0;
    }
    const stream = this.streams.get(id);
    if (stream === undefined) {
      if (this.isIdle(id)) fail(ErrorCode.PROTOCOL_ERROR, 'DATA on an idle stream');
      return; // a stream we closed or reset: its frames in flight are ignored (RFC 9113 §5.1)
    }
    if (stream.receivedEnd || !stream.finalHeadersReceived) {
      this.streamError(id, stream.receivedEnd ? ErrorCode.STREAM_CLOSED : ErrorCode.PROTOCOL_ERROR);
      return;
    }
    if (length > stream.recvWindow) {
      this.streamError(id, ErrorCode.FLOW_CONTROL_ERROR);
      return;
    }
    stream.recvWindow -= length;
    const payload = frame.payload;
    const endStream = (frame.flags & Flag.END_STREAM) !== 0;
    if (payload.length === 0 && !endStream && this.emptyFrames.hit()) {
      fail(ErrorCode.ENHANCE_YOUR_CALM, 'a flood of empty DATA frames');
    }
    if (length > payload.length) stream.consumed(length - payload.length);
    if (payload.length > 0) stream.handler?.data(stream, payload);
    if (endStream && !stream.closed) this.remoteEnd(stream);
  }

  private onHeaders(frame: Frame): void {
    if (frame.dependsOn === frame.streamId) fail(ErrorCode.PROTOCOL_ERROR, 'a stream depending on itself');
    const endHeaders = (frame.flags & Flag.END_HEADERS) !== 0;
    const endStream = (frame.flags & Flag.END_STREAM) !== 0;
    if (endHeaders) {
      if (frame.payload.length === 0 && !endStream && this.emptyFrames.hit()) {
        fail(ErrorCode.ENHANCE_YOUR_CALM, 'a flood of empty HEADERS frames');
      }
      this.onHeaderBlock(frame.streamId, frame.payload, endStream);
      return;
    }
    this.blockStreamId = frame.streamId;
    this.blockParts = [frame.payload];
    this.blockBytes = frame.payload.length;
    this.blockFrames = 1;
    this.blockEndStream = endStream;
    this.checkBlockBytes();
  }

  private onContinuation(frame: Frame): void {
    if (this.blockStreamId === 0 || frame.streamId !== this.blockStreamId) {
      fail(ErrorCode.PROTOCOL_ERROR, 'CONTINUATION without a header block to continue');
    }
    if (++this.blockFrames > this.limits.maxContinuationFrames) {
      fail(ErrorCode.ENHANCE_YOUR_CALM, 'a header block in too many CONTINUATION frames');
    }
    this.blockParts.push(frame.payload);
    this.blockBytes += frame.payload.length;
    this.checkBlockBytes();
    if ((frame.flags & Flag.END_HEADERS) === 0) return;
    const block =
      this.blockParts.length === 1 ? this.blockParts[0]! : Buffer.concat(this.blockParts, this.blockBytes);
    const id = this.blockStreamId;
    this.blockStreamId = 0;
    this.blockParts = [];
    this.onHeaderBlock(id, block, this.blockEndStream);
  }

  private checkBlockBytes(): void {
    if (this.blockBytes > this.limits.maxHeaderBlockBytes) {
      fail(ErrorCode.ENHANCE_YOUR_CALM, 'a header block over the size limit');
    }
  }

  /** A whole header block: decoded first in every case, so the HPACK table stays in step with the peer's. */
  private onHeaderBlock(id: number, block: Buffer, endStream: boolean): void {
    let fields = this.decoder.decode(block);
    if (fields !== undefined && fields.length > 2 * this.limits.maxHeaderFields) fields = undefined;
    const stream = this.streams.get(id);
    if (stream !== undefined) {
      if (stream.receivedEnd) {
        this.streamError(id, ErrorCode.STREAM_CLOSED);
        return;
      }
      if (!stream.finalHeadersReceived) {
        const informational = fields !== undefined && isInformational(fields);
        if (informational && endStream) {
          this.streamError(id, ErrorCode.PROTOCOL_ERROR);
          return;
        }
        if (!informational) stream.finalHeadersReceived = true;
        stream.handler?.headers(stream, fields, endStream);
        if (fields === undefined && !stream.closed) this.resetStream(stream, ErrorCode.PROTOCOL_ERROR, false);
        else if (endStream && !stream.closed) this.remoteEnd(stream);
        return;
      }
      if (!endStream || fields === undefined) {
        // Trailers end the stream (RFC 9113 §8.1); a second block without END_STREAM is malformed.
        this.streamError(id, ErrorCode.PROTOCOL_ERROR);
        return;
      }
      stream.handler?.trailers(stream, fields);
      if (!stream.closed) this.remoteEnd(stream);
      return;
    }
    if (!this.isIdle(id)) {
      // A block on a stream that is gone: ours to ignore when we reset it (frames in flight, RFC 9113 §5.1);
      // from a client, any other is a stream id going backwards or a closed stream reopened.
      if (this.role === 'server' && !this.recentlyReset.includes(id)) {
        fail(ErrorCode.PROTOCOL_ERROR, 'HEADERS on a closed or skipped stream');
      }
      return;
    }
    if (this.role === 'client') fail(ErrorCode.PROTOCOL_ERROR, 'HEADERS opening a stream on a client');
    if ((id & 1) === 0) fail(ErrorCode.PROTOCOL_ERROR, 'a client stream with an even id');
    this.lastPeerStreamId = id;
    if (this.goawaySent) return; // above the last stream id of our GOAWAY: ignored (RFC 9113 §6.8)
    if (this.peerStreamsOpen >= this.limits.maxConcurrentStreams) {
      this.queueControl(encodeRstStream(id, ErrorCode.REFUSED_STREAM));
      if (this.resets.hit()) fail(ErrorCode.ENHANCE_YOUR_CALM, 'too many refused or reset streams');
      return;
    }
    const created = new ConnectionStream(
      id,
      this,
      this.remoteSettings.initialWindowSize,
      this.receiveWindowForNewStream(),
      false,
    );
    this.streams.set(id, created);
    this.peerStreamsOpen++;
    this.connectionHandler.stream?.(created, fields, endStream);
    if (endStream && !created.closed) this.remoteEnd(created);
  }

  private receiveWindowForNewStream(): number {
    // Until our SETTINGS are acknowledged the peer may still go by the RFC's initial window.
    const ours = this.limits.initialWindowSize;
    return this.settingsAcked ? ours : Math.max(ours, DEFAULT_WINDOW_SIZE);
  }

  private remoteEnd(stream: ConnectionStream): void {
    stream.markRemoteEnd();
    stream.handler?.end(stream);
    if (stream.endWritten) this.closeStream(stream);
  }

  private onRstStream(frame: Frame): void {
    const id = frame.streamId;
    const stream = this.streams.get(id);
    if (stream === undefined) {
      if (this.isIdle(id)) fail(ErrorCode.PROTOCOL_ERROR, 'RST_STREAM on an idle stream');
      return;
    }
    const code = readRstStreamCode(frame.payload);
    // Rapid reset (CVE-2023-44487): a stream the peer opened and cancels before our answer ended.
    if (this.role === 'server' && !stream.endWritten && this.resets.hit()) {
      fail(ErrorCode.ENHANCE_YOUR_CALM, 'too many streams reset by the peer');
    }
    this.removeStream(stream);
    stream.handler?.reset(stream, { code, byPeer: true, retryable: code === ErrorCode.REFUSED_STREAM });
    this.afterStreamGone();
  }

  private onSettings(frame: Frame): void {
    if ((frame.flags & Flag.ACK) !== 0) {
      this.settingsAcked = true;
      return;
    }
    if (this.emptyFrames.hit()) fail(ErrorCode.ENHANCE_YOUR_CALM, 'a flood of SETTINGS');
    const settings = this.remoteSettings;
    const oldWindow = settings.initialWindowSize;
    const oldTable = settings.headerTableSize;
    applySettings(settings, frame.payload);
    const delta = settings.initialWindowSize - oldWindow;
    if (delta !== 0) {
      for (const stream of this.streams.values()) {
        stream.sendWindow += delta;
        if (stream.sendWindow > MAX_WINDOW_SIZE)
          fail(ErrorCode.FLOW_CONTROL_ERROR, 'a stream window over 2^31-1');
        if (delta > 0 && stream.hasPending) this.wantToSend(stream);
      }
    }
    if (settings.headerTableSize !== oldTable) this.encoder.setPeerMaxTableSize(settings.headerTableSize);
    this.queueControl(encodeSettings());
    if (!this.remoteSettingsSeen) {
      this.remoteSettingsSeen = true;
      this.connectionHandler.remoteSettings?.();
    }
  }

  private onPing(frame: Frame): void {
    if ((frame.flags & Flag.ACK) !== 0) {
      const key = frame.payload.toString('latin1');
      const onAck = this.pings.get(key);
      if (onAck !== undefined) {
        this.pings.delete(key);
        onAck();
      }
      return;
    }
    if (this.emptyFrames.hit()) fail(ErrorCode.ENHANCE_YOUR_CALM, 'a flood of PING');
    this.queueControl(encodePing(frame.payload, true));
  }

  private onGoaway(frame: Frame): void {
    const goaway = readGoaway(frame.payload);
    this.goawayReceived = true;
    const retry: ConnectionStream[] = [];
    for (const stream of this.streams.values()) {
      const ours = (stream.id & 1) === (this.role === 'client' ? 1 : 0);
      if (ours && stream.id > goaway.lastStreamId) retry.push(stream);
    }
    for (const stream of retry) {
      this.removeStream(stream);
      stream.handler?.reset(stream, { code: goaway.code, byPeer: true, retryable: true });
    }
    this.connectionHandler.goaway?.(goaway.lastStreamId, goaway.code);
    if (goaway.code !== ErrorCode.NO_ERROR) {
      this.endReason = {
        code: goaway.code,
        by: 'peer',
        message: `GOAWAY ${errorCodeName(goaway.code)} ${goaway.debug.toString('latin1')}`.trim(),
      };
    }
    this.afterStreamGone();
  }

  private onWindowUpdate(frame: Frame): void {
    const id = frame.streamId;
    const increment = readWindowIncrement(frame.payload);
    if (id === 0) {
      if (increment === 0) fail(ErrorCode.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0 on the connection');
      this.connSendWindow += increment;
      if (this.connSendWindow > MAX_WINDOW_SIZE)
        fail(ErrorCode.FLOW_CONTROL_ERROR, 'connection window over 2^31-1');
      if (this.sendList.length > 0) this.scheduleFlush();
      return;
    }
    const stream = this.streams.get(id);
    if (stream === undefined) {
      if (this.isIdle(id)) fail(ErrorCode.PROTOCOL_ERROR, 'WINDOW_UPDATE on an idle stream');
      return;
    }
    if (increment === 0) {
      this.streamError(id, ErrorCode.PROTOCOL_ERROR);
      return;
    }
    stream.sendWindow += increment;
    if (stream.sendWindow > MAX_WINDOW_SIZE) {
      this.streamError(id, ErrorCode.FLOW_CONTROL_ERROR);
      return;
    }
    if (stream.hasPending) this.wantToSend(stream);
  }

  /** A stream error (RFC 9113 §5.4.2): RST_STREAM, and the stream's owner told. */
  private streamError(id: number, code: number): void {
    const stream = this.streams.get(id);
    if (stream === undefined) {
      if (!this.countPeerFault(code)) this.queueControl(encodeRstStream(id, code));
      return;
    }
    this.resetStream(stream, code, true);
  }

  /**
   * A reset we send for the peer's own fault (a malformed request or frame) counts as one the peer sent: a peer
   * could otherwise make us reset streams as fast as it opens them (MadeYouReset, CVE-2025-8671). True when that
   * was one too many and the connection is ending.
   */
  private countPeerFault(code: number): boolean {
    if (
      code !== ErrorCode.PROTOCOL_ERROR &&
      code !== ErrorCode.FLOW_CONTROL_ERROR &&
      code !== ErrorCode.STREAM_CLOSED &&
      code !== ErrorCode.FRAME_SIZE_ERROR
    ) {
      return false;
    }
    if (!this.resets.hit()) return false;
    this.destroy(ErrorCode.ENHANCE_YOUR_CALM, 'too many streams reset for the peer’s errors');
    return true;
  }

  // ---- streams ------------------------------------------------------------------------------------------------

  /**
   * Client role: opens a stream (the next odd id) with this request header block. Returns null when the
   * connection cannot take one (GOAWAY either way, closed, or the peer's MAX_CONCURRENT_STREAMS reached).
   */
  request(fields: readonly string[], endStream: boolean, handler: Http2StreamHandler): Http2Stream | null {
    if (!this.canRequest) return null;
    const id = this.nextStreamId;
    this.nextStreamId += 2;
    const stream = new ConnectionStream(
      id,
      this,
      this.remoteSettings.initialWindowSize,
      this.receiveWindowForNewStream(),
      true,
    );
    stream.handler = handler;
    this.streams.set(id, stream);
    this.localStreamsOpen++;
    stream.sendHeaders(fields, endStream);
    return stream;
  }

  /** Called by a stream: its header block goes out now (HPACK order is wire order). */
  writeHeaders(stream: ConnectionStream, fields: readonly string[], endStream: boolean): void {
    this.push(this.headerFrames(stream.id, fields, endStream));
    if (endStream) this.endWritten(stream);
    this.scheduleFlush();
  }

  /**
   * The block is encoded straight after its frame header in a shared slab (one Buffer per HEADERS frame, no
   * copy); a block over the peer's frame size is framed again with CONTINUATION frames.
   */
  private headerFrames(id: number, fields: readonly string[], endStream: boolean): Buffer {
    const room = FRAME_HEADER_LENGTH + maxBlockLength(fields);
    if (headerSlabUsed + room > headerSlab.length) {
      headerSlab = Buffer.allocUnsafe(Math.max(HEADER_SLAB_SIZE, room));
      headerSlabUsed = 0;
    }
    const slab = headerSlab;
    const start = headerSlabUsed;
    const end = this.encoder.encodeInto(fields, slab, start + FRAME_HEADER_LENGTH);
    const length = end - start - FRAME_HEADER_LENGTH;
    const maxFrameSize = this.remoteSettings.maxFrameSize;
    if (length > maxFrameSize) {
      return encodeHeaders(id, slab.subarray(start + FRAME_HEADER_LENGTH, end), { endStream, maxFrameSize });
    }
    headerSlabUsed = (end + 7) & ~7;
    const flags = endStream ? Flag.END_STREAM | Flag.END_HEADERS : Flag.END_HEADERS;
    writeFrameHeader(slab, start, length, FrameType.HEADERS, flags, id);
    return slab.subarray(start, end);
  }

  /** Called by a stream with something to frame. */
  wantToSend(stream: ConnectionStream): void {
    if (!stream.inSendList) {
      stream.inSendList = true;
      this.sendList.push(stream);
    }
    this.scheduleFlush();
  }

  /** Our RST_STREAM (`byPeer` false) or a stream error we raise (`notify`: the owner hears of it). */
  resetStream(stream: ConnectionStream, code: number, notify: boolean): void {
    if (stream.closed) return;
    if (this.countPeerFault(code)) return;
    this.queueControl(encodeRstStream(stream.id, code));
    if (this.recentlyReset.push(stream.id) > 64) this.recentlyReset.shift();
    this.removeStream(stream);
    if (notify) stream.handler?.reset(stream, { code, byPeer: false, retryable: false });
    this.afterStreamGone();
  }

  /** Our END_STREAM is out: the stream closes if the peer's is in, or is reset if its input was abandoned. */
  private endWritten(stream: ConnectionStream): void {
    stream.endWritten = true;
    if (stream.receivedEnd) this.closeStream(stream);
    else if (stream.inputAbandoned) this.resetStream(stream, ErrorCode.NO_ERROR, true);
  }

  private closeStream(stream: ConnectionStream): void {
    if (stream.closed) return;
    this.removeStream(stream);
    stream.handler?.close?.(stream);
    this.afterStreamGone();
  }

  private removeStream(stream: ConnectionStream): void {
    if (stream.closed) return;
    stream.markDone();
    this.streams.delete(stream.id);
    if ((stream.id & 1) === (this.role === 'server' ? 1 : 0)) this.peerStreamsOpen--;
    else this.localStreamsOpen--;
  }

  /** After a stream left: a connection going away ends when its last stream has. */
  private afterStreamGone(): void {
    if ((this.goawaySent || this.goawayReceived) && this.streams.size === 0 && !this.finished) {
      this.scheduleFlush();
    }
  }

  // ---- control ------------------------------------------------------------------------------------------------

  /** Sends a PING; `onAck` runs when its ACK arrives (once). */
  ping(onAck?: () => void): void {
    if (this.finished) return;
    const opaque = Buffer.alloc(8);
    opaque.writeUInt32BE(++this.pingCounter >>> 0, 4);
    if (onAck !== undefined) this.pings.set(opaque.toString('latin1'), onAck);
    this.push(encodePing(opaque, false));
    this.scheduleFlush();
  }

  /**
   * Graceful close: GOAWAY(NO_ERROR) with the last stream id the peer opened; streams in flight finish, new ones
   * are refused; the transport ends when the last stream closes.
   */
  close(): void {
    if (this.finished || this.goawaySent) return;
    this.goawaySent = true;
    this.push(encodeGoaway(this.lastPeerStreamId, ErrorCode.NO_ERROR));
    this.scheduleFlush();
  }

  /** GOAWAY with this code and the transport closed; every open stream is reset. */
  destroy(code: number = ErrorCode.NO_ERROR, message?: string): void {
    if (this.finished) return;
    this.goawaySent = true;
    this.push(
      encodeGoaway(this.lastPeerStreamId, code, message === undefined ? undefined : Buffer.from(message)),
    );
    this.writeOut();
    this.finish({ code, by: 'local', message: message ?? errorCodeName(code) });
    this.transport.end();
  }

  /** The transport closed (the socket's 'close'): every open stream is reset, `close` reported once. */
  transportClosed(error?: Error): void {
    if (this.finished) return;
    this.finish(
      this.endReason ?? {
        code: this.goawaySent || this.goawayReceived ? ErrorCode.NO_ERROR : ErrorCode.CANCEL,
        by: 'peer',
        message: error?.message ?? 'the connection closed',
      },
    );
  }

  private finish(end: Http2ConnectionEnd): void {
    this.finished = true;
    this.sendList = [];
    const open = [...this.streams.values()];
    for (const stream of open) this.removeStream(stream);
    const reset: Http2StreamReset = {
      code: end.code === ErrorCode.NO_ERROR ? ErrorCode.CANCEL : end.code,
      byPeer: end.by === 'peer',
      retryable: false,
    };
    for (const stream of open) stream.handler?.reset(stream, reset);
    this.pings.clear();
    this.connectionHandler.close(end);
  }

  /** The transport's buffer went under its bound: queued DATA may go on. */
  transportDrained(): void {
    if (!this.blocked) return;
    this.blocked = false;
    this.controlWhileBlocked = 0;
    this.scheduleFlush();
  }

  /** A control frame that answers the peer (ACKs, RST_STREAM, WINDOW_UPDATE): capped while the peer does not read. */
  queueControl(frame: Buffer): void {
    if (this.finished) return;
    if (this.blocked && ++this.controlWhileBlocked > this.limits.maxQueuedControlFrames) {
      this.destroy(ErrorCode.ENHANCE_YOUR_CALM, 'control frames queued while the peer does not read');
      return;
    }
    this.push(frame);
    this.scheduleFlush();
  }

  // ---- output -------------------------------------------------------------------------------------------------

  private push(bytes: Buffer): void {
    this.out.push(bytes);
    this.outBytes += bytes.length;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.finished) return;
    this.flushScheduled = true;
    this.schedule(this.flushBound);
  }

  /** Frames what the windows allow and writes the turn's frames at once (HeldWrite). */
  flushHeld(): void {
    this.flushScheduled = false;
    if (this.finished) return;
    this.frameData();
    this.writeOut();
    if (!this.blocked) this.notifyDrain();
    if ((this.goawaySent || this.goawayReceived) && this.streams.size === 0 && !this.finished) {
      this.finish(
        this.endReason ?? {
          code: ErrorCode.NO_ERROR,
          by: this.goawaySent ? 'local' : 'peer',
          message: 'GOAWAY',
        },
      );
      this.transport.end();
    }
  }

  private frameData(): void {
    let list = this.sendList;
    while (list.length > 0 && !this.blocked && this.outBytes < this.limits.maxBufferedOutput) {
      const waiting: ConnectionStream[] = [];
      let progressed = false;
      for (const stream of list) {
        if (!stream.hasPending) {
          stream.inSendList = false;
          continue;
        }
        const limit = Math.min(stream.sendWindow, this.connSendWindow, this.remoteSettings.maxFrameSize);
        const before = this.out.length;
        const sent = stream.frameNext(this.out, limit, this.headerFramesBound);
        if (this.out.length !== before) {
          progressed = true;
          for (let i = before; i < this.out.length; i++) this.outBytes += this.out[i]!.length;
        }
        stream.sendWindow -= sent;
        this.connSendWindow -= sent;
        if (stream.endWritten && !stream.hasPending) {
          stream.inSendList = false;
          this.endWritten(stream);
          continue;
        }
        if (stream.hasPending) waiting.push(stream);
        else stream.inSendList = false;
      }
      list = waiting;
      if (!progressed) break;
      if (this.outBytes >= this.limits.maxBufferedOutput) break;
    }
    this.sendList = list;
  }

  private writeOut(): void {
    if (this.out.length === 0) return;
    const chunks = this.out;
    this.out = [];
    this.outBytes = 0;
    if (!this.transport.write(chunks)) this.blocked = true;
  }

  /** Called by a stream whose `sendData` returned false. */
  waitForDrain(stream: ConnectionStream): void {
    if (stream.wantsDrain) return;
    stream.wantsDrain = true;
    this.drainWaiters.push(stream);
  }

  private notifyDrain(): void {
    if (this.drainWaiters.length === 0) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const stream of waiters) {
      if (stream.closed) continue;
      if (stream.bufferedLength > STREAM_HIGH_WATER) {
        this.drainWaiters.push(stream);
        continue;
      }
      stream.wantsDrain = false;
      stream.handler?.drain(stream);
    }
  }
}

function isInformational(fields: readonly string[]): boolean {
  return fields[0] === ':status' && fields[1] !== undefined && fields[1].length === 3 && fields[1][0] === '1';
}
