import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** Client-side limits of a listener port; every one is a CLI flag (README "Security"). */
export interface ListenerLimits {
  /** Whole request head must arrive within this (slowloris), else 408. */
  readonly headerTimeoutMs: number;
  /** Idle time between requests on a keep-alive connection. */
  readonly keepAliveTimeoutMs: number;
  /** A connection with no bytes moving either way for this long is closed. */
  readonly idleTimeoutMs: number;
  /** Request line plus headers, in bytes; more is 431. */
  readonly maxHeaderBytes: number;
  /** Request header fields; more is 400 (nginx answers too many the same way). */
  readonly maxHeaders: number;
  /** A response the client stops reading is cut after this long without progress. */
  readonly sendTimeoutMs: number;
  /** An upgraded connection (a tunnel) with no bytes moving either way is closed after this. */
  readonly tunnelIdleTimeoutMs: number;
  /** The js HTTP/2 codec's streams per client connection (`--http2-max-concurrent-streams`). */
  readonly http2MaxConcurrentStreams?: number;
  /** The js HTTP/2 codec's request body window per stream (`--http2-stream-window-bytes`). */
  readonly http2StreamWindowBytes?: number;
  /** The js HTTP/2 codec's rapid-reset bound (`--http2-max-resets-per-10s`). */
  readonly http2MaxResetsPer10s?: number;
}

export const DEFAULT_LISTENER_LIMITS: ListenerLimits = {
  headerTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  idleTimeoutMs: 120_000,
  maxHeaderBytes: 16_384,
  maxHeaders: 100,
  sendTimeoutMs: 60_000,
  tunnelIdleTimeoutMs: 3_600_000,
};

export interface Refusal {
  readonly status: number;
  /** Short, fixed text: the body of the answer, the metric's label, the log's reason. */
  readonly reason: string;
}

const TOO_MANY_HEADERS: Refusal = { status: 400, reason: 'too many headers' };
const DUPLICATE_HOST: Refusal = { status: 400, reason: 'duplicate host header' };
const BAD_VERSION: Refusal = { status: 505, reason: 'http version not supported' };
const BAD_TRANSFER_ENCODING: Refusal = { status: 400, reason: 'unsupported transfer-encoding' };

/**
 * Checks an HTTP/1 request the parser accepted but a gateway must refuse: a version other than 1.x (the
 * parser takes `HTTP/2.0` on an HTTP/1 connection), more header fields than the limit, or two Host headers
 * (two hosts make routing ambiguous, RFC 9112 §3.2), or a Transfer-Encoding other than chunked. One pass
 * over the raw headers.
 */
export function refuseRequest(req: IncomingMessage, maxHeaders: number): Refusal | undefined {
  if (req.httpVersionMajor !== 1) return BAD_VERSION;
  const raw = req.rawHeaders;
  if (raw.length > maxHeaders * 2) return TOO_MANY_HEADERS;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host' && ++hosts > 1) return DUPLICATE_HOST;
    // Only `chunked` frames a request body we can read the end of; anything else is a smuggling risk.
    if (name.length === 17 && name.toLowerCase() === 'transfer-encoding') {
      if (raw[i + 1]!.trim().toLowerCase() !== 'chunked') return BAD_TRANSFER_ENCODING;
    }
  }
  return undefined;
}

const BAD_FRAMING: Refusal = { status: 400, reason: 'invalid message framing' };

/**
 * A request line whose version is well formed (`HTTP/<digit>.<digit>` then CRLF) but not one we speak: only
 * then is the answer 505 (RFC 9110 §15.6.6). llhttp reports a bare LF after the version, or a malformed
 * version, with the same code; those are framing errors and get 400.
 */
const WELL_FORMED_VERSION = /^[^ \r\n]+ [^ \r\n]+ HTTP\/\d\.\d\r\n/;

/**
 * What the HTTP/1 parser's errors mean to the client: a 4xx (or 505), never a 5xx. `rawPacket` is the data
 * the parser stopped in (Node's `clientError` carries it).
 */
export function refusalForParseError(code: string | undefined, rawPacket?: Buffer): Refusal {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, reason: 'request header fields too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'request timeout' };
    case 'HPE_INVALID_VERSION':
      return rawPacket !== undefined && WELL_FORMED_VERSION.test(rawPacket.toString('latin1', 0, 8_192))
        ? BAD_VERSION
        : BAD_FRAMING;
    case 'HPE_INVALID_METHOD':
      return { status: 400, reason: 'invalid method' };
    // Errors in the body's framing (chunk sizes, chunk line endings, lengths) arrive after the head was
    // accepted; they are answered like the head's as long as no response has started (see responseInProgress).
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_CR_EXPECTED':
    case 'HPE_LF_EXPECTED':
    case 'HPE_STRICT':
    case 'HPE_INVALID_EOF_STATE':
      return BAD_FRAMING;
    default:
      return { status: 400, reason: 'bad request' };
  }
}

/** The raw answer for a connection the HTTP server cannot give a response object (a parse error). */
export function rawRefusal(refusal: Refusal): string {
  const body = `${refusal.reason}\n`;
  return (
    `HTTP/1.1 ${refusal.status} ${STATUS_TEXT[refusal.status] ?? 'Bad Request'}\r\n` +
    `content-type: text/plain; charset=utf-8\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`
  );
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
  505: 'HTTP Version Not Supported',
};

/**
 * True when a response has started on this socket (its head is written or being written): a raw answer now
 * would land in the middle of it, so the connection is cut instead. A request still being read (a body whose
 * framing broke) has a response object but nothing sent yet: it can still be refused. Node's own default
 * makes the same check.
 */
export function responseInProgress(socket: Socket): boolean {
  const res = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  return res != null && res.headersSent === true;
}
