/**
 * One HTTP/2 connection on the project's own codec, either role (RFC 9113): preface, SETTINGS and their ACK,
 * PING, GOAWAY, flow control both ways, the stream table and states, header blocks with CONTINUATION, HPACK
 * per connection and the limits that keep a hostile peer's cost its own. Bytes in through `receive`, bytes out
 * through the Http2Transport, gathered and written once per event-loop turn. No sockets here
 * (socket-transport.ts), no HTTP semantics beyond the frame layer (the server side and the upstream pool).
 */
import type {
  Http2ConnectionHandler,
  Http2ConnectionOptions,
  Http2Limits,
  Http2Stream,
  Http2StreamHandler,
} from './connection-api.ts';
import type { Http2Settings } from './frames.ts';

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

export class Http2Connection {
  readonly role: 'server' | 'client';
  /** The peer's SETTINGS as they stand (the RFC's initial values until its first SETTINGS). */
  readonly remoteSettings: Http2Settings;

  constructor(options: Http2ConnectionOptions) {
    void options;
    throw new Error('not yet');
  }

  /** Bytes from the transport. A protocol error sends GOAWAY and closes; it never throws. */
  receive(chunk: Buffer): void {
    void chunk;
  }

  /** The transport's buffer went under its bound: queued DATA may go on. */
  transportDrained(): void {}

  /** The transport closed (the socket's 'close'): every open stream is reset, `close` reported once. */
  transportClosed(error?: Error): void {
    void error;
  }

  /**
   * Client role: opens a stream (the next odd id) with this request header block. Returns null when the
   * connection cannot take one (GOAWAY either way, closed, or the peer's MAX_CONCURRENT_STREAMS reached).
   */
  request(fields: readonly string[], endStream: boolean, handler: Http2StreamHandler): Http2Stream | null {
    void fields;
    void endStream;
    void handler;
    return null;
  }

  /** Streams open now (either side not ended). */
  get activeStreams(): number {
    return 0;
  }

  /** Client role: a new stream would be accepted (no GOAWAY, under the peer's MAX_CONCURRENT_STREAMS). */
  get canRequest(): boolean {
    return false;
  }

  /** Sends a PING; `onAck` runs when its ACK arrives (once). */
  ping(onAck?: () => void): void {
    void onAck;
  }

  /**
   * Graceful close: GOAWAY(NO_ERROR) with the last stream id the peer opened; streams in flight finish, new ones
   * are refused; the transport ends when the last stream closes.
   */
  close(): void {}

  /** GOAWAY with this code and the transport destroyed; every open stream is reset. */
  destroy(code?: number, message?: string): void {
    void code;
    void message;
  }

  /** The handler given in the options (for the socket glue). */
  get handler(): Http2ConnectionHandler {
    throw new Error('not yet');
  }
}
