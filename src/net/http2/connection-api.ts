/**
 * The public shape of an HTTP/2 connection on the project's own codec (connection.ts implements it): what its
 * owner (the server side in proxy/listen, the h2c upstream pool in proxy/upstream) hands in and gets out. Header
 * fields travel flat, `[name0, value0, name1, value1, ...]`, latin1 strings, names lower-case on send and as
 * sent on receipt, pseudo-headers first (the HPACK API's form).
 */

/** Where the connection's bytes go: a socket (socket-transport.ts) or, in unit tests, an array. */
export interface Http2Transport {
  /**
   * The frames of one event-loop turn, in order, written together. Returns false when the transport's buffer
   * is over its bound: the connection then sends no more DATA (control frames are capped) until it is told
   * `transportDrained()`.
   */
  write(chunks: readonly Buffer[]): boolean;
  /** Close after what was written (after a GOAWAY). */
  end(): void;
  /** Close now. */
  destroy(): void;
}

/** Our limits; every one has a default (connection.ts, DEFAULT_LIMITS). */
export interface Http2Limits {
  /** SETTINGS_MAX_CONCURRENT_STREAMS we advertise (peer-opened streams over it are refused). Default 100. */
  maxConcurrentStreams: number;
  /** SETTINGS_INITIAL_WINDOW_SIZE we advertise: how much of one stream's body the peer may send unread. */
  initialWindowSize: number;
  /** The connection's receive window (raised from 65,535 by a WINDOW_UPDATE right after our SETTINGS). */
  connectionWindowSize: number;
  /** SETTINGS_MAX_FRAME_SIZE we advertise. Default 16,384. */
  maxFrameSize: number;
  /** SETTINGS_HEADER_TABLE_SIZE we advertise (our HPACK decoder's table). Default 4096. */
  headerTableSize: number;
  /** SETTINGS_MAX_HEADER_LIST_SIZE (RFC 9113 §6.5.2 size: name + value + 32 per field). Default 65,536. */
  maxHeaderListSize: number;
  /** The most fields one header block may carry (a larger block is answered as over the size limit). */
  maxHeaderFields: number;
  /** A header block's compressed bytes (HEADERS + CONTINUATION) over this ends the connection (CVE-2024-27316). */
  maxHeaderBlockBytes: number;
  /** Frames of one header block over this end the connection (a CONTINUATION flood). Default 64. */
  maxContinuationFrames: number;
  /** Control frames (SETTINGS ACK, PING ACK, RST_STREAM) queued while the peer does not read; over it: GOAWAY. */
  maxQueuedControlFrames: number;
  /** Streams the peer resets (or we refuse) per `floodWindowMs` before GOAWAY ENHANCE_YOUR_CALM (rapid reset). */
  maxResetsPerWindow: number;
  /** Empty DATA/HEADERS/CONTINUATION frames without END_STREAM, PINGs and SETTINGS per `floodWindowMs`. */
  maxEmptyFramesPerWindow: number;
  floodWindowMs: number;
  /** Bytes queued for the transport past which streams' DATA waits for `transportDrained()`. Default 256 KiB. */
  maxBufferedOutput: number;
}

export interface Http2ConnectionOptions {
  role: 'server' | 'client';
  transport: Http2Transport;
  handler: Http2ConnectionHandler;
  limits?: Partial<Http2Limits>;
  /** SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441) in our SETTINGS (server role). */
  enableConnectProtocol?: boolean;
  /** Milliseconds for the flood windows; `Date.now` unless a test brings a fake clock. */
  now?: () => number;
  /** How the frames of a turn are flushed; `flushAtEndOfPoll` (src/net/end-of-poll.ts) unless a test flushes. */
  scheduleFlush?: (flush: () => void) => void;
}

/** Why a connection ended: our GOAWAY's code or the peer's, and who sent it. */
export interface Http2ConnectionEnd {
  code: number;
  /** 'peer': the peer's GOAWAY or its transport closed; 'local': we sent GOAWAY (a protocol error or a close). */
  by: 'peer' | 'local';
  message: string;
}

export interface Http2ConnectionHandler {
  /**
   * Server role: a request's header block arrived on a new stream (already checked as a header block; the HTTP
   * checks of RFC 9113 §8 are the server side's). Set `stream.handler` before returning.
   * `fields` is undefined when the block was over maxHeaderListSize/maxHeaderFields: answer 431 or reset.
   */
  stream?(stream: Http2Stream, fields: string[] | undefined, endStream: boolean): void;
  /** The peer's SETTINGS arrived (the first time: the connection is ready for its limits). */
  remoteSettings?(): void;
  /** The peer sent GOAWAY: streams above `lastStreamId` were reset with `retryable`; no new requests. */
  goaway?(lastStreamId: number, code: number): void;
  /** Every stream has ended after a GOAWAY either way, or the transport closed: the connection is done. */
  close(end: Http2ConnectionEnd): void;
}

/** How a stream ended early. */
export interface Http2StreamReset {
  code: number;
  /** True when the peer sent RST_STREAM (or GOAWAY); false when we did or the connection ended. */
  byPeer: boolean;
  /** The peer never processed the request (REFUSED_STREAM, or above a GOAWAY's last stream id): safe to retry. */
  retryable: boolean;
}

/** What a stream reports to its owner; the owner sets `stream.handler` (server: in `stream`, client: request). */
export interface Http2StreamHandler {
  /**
   * A header block: the response's informational (1xx) and final headers (client role), not a request's first
   * block (that is `Http2ConnectionHandler.stream`). undefined: over the header limits (client: reset follows).
   */
  headers(stream: Http2Stream, fields: string[] | undefined, endStream: boolean): void;
  /** Body bytes; call `stream.consumed(chunk.length)` once they are passed on (that reopens the window). */
  data(stream: Http2Stream, chunk: Buffer): void;
  /** Trailers: the last block; `end` follows. */
  trailers(stream: Http2Stream, fields: string[]): void;
  /** The peer's side is complete (END_STREAM). */
  end(stream: Http2Stream): void;
  /** The stream ended early, either way; nothing else follows. */
  reset(stream: Http2Stream, reset: Http2StreamReset): void;
  /** After `sendData` returned false: there is room again. */
  drain(stream: Http2Stream): void;
  /** Both sides are done (after `end` and our END_STREAM) and the stream left the table. */
  close?(stream: Http2Stream): void;
}

/** The stream methods a connection offers (connection.ts's Http2Stream implements them). */
export interface Http2StreamApi {
  readonly id: number;
  handler: Http2StreamHandler | null;
  /** Anything the owner hangs on the stream (its request object), to avoid a map from stream to owner. */
  owner: unknown;
  /** A header block: response headers (server), 1xx included; request headers come from `request`. */
  sendHeaders(fields: readonly string[], endStream: boolean): void;
  /**
   * Body bytes, split into frames as the windows allow. Returns false when this stream holds more than a window
   * of unsent bytes or the transport is over its bound: wait for `drain`. The chunk is kept, not copied.
   */
  sendData(chunk: Buffer, endStream: boolean): boolean;
  /** Trailers (HEADERS with END_STREAM) after the body. */
  sendTrailers(fields: readonly string[]): void;
  /** END_STREAM with no more bytes (an empty DATA frame, after any queued body). */
  end(): void;
  /** RST_STREAM with this code (CANCEL by default); no more events. */
  reset(code?: number): void;
  /**
   * The rest of the peer's body is not wanted: once our END_STREAM is out, RST_STREAM(NO_ERROR) ends the stream
   * (RFC 9113 §8.1, a complete response before the complete request). Nothing happens if the peer ended first.
   */
  abandonInput(): void;
  /** The owner passed on `bytes` of received body: the window reopens (WINDOW_UPDATE batched at half). */
  consumed(bytes: number): void;
  /** Bytes given to `sendData` not yet framed. */
  readonly bufferedLength: number;
  /** Our END_STREAM was queued. */
  readonly sentEnd: boolean;
  /** The peer's END_STREAM arrived. */
  readonly receivedEnd: boolean;
  /** Reset or both sides ended. */
  readonly closed: boolean;
}

/** A stream object; the class lives in connection.ts. */
export type Http2Stream = Http2StreamApi;
