import type { Socket } from 'node:net';
import { UpstreamFailure } from './attempt-outcome.ts';
import type { Http1Request } from './http1-request.ts';
import { isNamed } from './http1-response-head.ts';

/**
 * Reading one response off an HTTP/1.1 connection: the parser's callbacks (headers, interim 1xx answers,
 * Keep-Alive hints, body chunks with the client's backpressure, trailers, the end of the message), bound to
 * a connection by `bindResponseParser`. The connection (http1-connection.ts) is seen through
 * `ParsingConnection` only.
 */

/** Node's llhttp binding as its HTTP client uses it (lib/_http_common.js), and what http1-response-parser.ts offers. */
export interface NativeParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(data: Buffer): number | Error;
  finish(): number | Error | undefined;
  close(): void;
  [callback: number]: unknown;
}
export interface NativeParserClass {
  new (): NativeParser;
  readonly RESPONSE: number;
  readonly kOnHeaders: number;
  readonly kOnHeadersComplete: number;
  readonly kOnBody: number;
  readonly kOnMessageComplete: number;
  readonly kLenientNone: number;
}

/** 1xx responses one request may receive before its final one (100 Continue, 102, 103: a few at most). */
const MAX_INTERIM_RESPONSES = 16;
/** A keep-alive hint this close to running out is not worth a request (undici keeps the same margin). */
const KEEP_ALIVE_MARGIN_MS = 1000;

/** What reading a response needs of the connection it arrives on. */
export interface ParsingConnection {
  readonly socket: Socket;
  readonly keepAliveTimeoutMs: number;
  request: Http1Request | undefined;
  keepAlive: boolean;
  complete: boolean;
  paused: boolean;
  interimResponses: number;
  idleLimitMs: number;
  headerParts: string[] | undefined;
  trailers: string[] | undefined;
  fail(err: Error): void;
  /** The response timeout stops (the client's backpressure paused the response). */
  stopResponseTimeout(): void;
}

const kConnection = Symbol('http1Connection');
type BoundParser = NativeParser & { [kConnection]: ParsingConnection };

/** A new response parser whose callbacks report to `connection`. */
export function bindResponseParser(Parser: NativeParserClass, connection: ParsingConnection): NativeParser {
  const parser = new Parser() as BoundParser;
  parser.initialize(Parser.RESPONSE, {}, 0, Parser.kLenientNone);
  parser[kConnection] = connection;
  parser[Parser.kOnHeaders] = onParserHeaders;
  parser[Parser.kOnHeadersComplete] = onParserHeadersComplete;
  parser[Parser.kOnBody] = onParserBody;
  parser[Parser.kOnMessageComplete] = onParserMessageComplete;
  return parser;
}

function onParserHeaders(this: BoundParser, headers: string[]): void {
  const connection = this[kConnection];
  // Headers beyond llhttp's batch, or trailers after a chunked body.
  if (connection.request?.responded) connection.trailers = (connection.trailers ?? []).concat(headers);
  else connection.headerParts = (connection.headerParts ?? []).concat(headers);
}

function onParserHeadersComplete(
  this: BoundParser,
  _versionMajor: number,
  _versionMinor: number,
  batch: string[] | undefined,
  _method: unknown,
  _url: unknown,
  statusCode: number,
  _statusMessage: string,
  upgrade: boolean,
  shouldKeepAlive: boolean,
): number {
  const connection = this[kConnection];
  const request = connection.request;
  let headers = batch ?? [];
  if (connection.headerParts !== undefined) {
    headers = connection.headerParts.concat(headers);
    connection.headerParts = undefined;
  }
  if (request === undefined || request.done || connection.complete) {
    // A response nobody asked for: the connection cannot be trusted with another request.
    connection.keepAlive = false;
    return 1;
  }
  // 1xx answers are interim (the final one follows on the same connection); 101 never is, as no upgrade is sent here.
  // Each one is activity that restarts the response timeout, so a backend could hold a request with them forever.
  if (statusCode < 200 && statusCode !== 101) {
    if (++connection.interimResponses === MAX_INTERIM_RESPONSES + 1)
      process.nextTick(failEndlessInterim, connection);
    return 1;
  }
  if (upgrade || statusCode === 101) {
    process.nextTick(failUnexpectedUpgrade, connection);
    return 1;
  }
  connection.keepAlive = shouldKeepAlive;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    if (name.length === 10 && isNamed(name, 'keep-alive')) {
      const timeout = /timeout=(\d+)/i.exec(headers[i + 1]!);
      if (timeout !== null) {
        connection.idleLimitMs = Math.min(
          connection.keepAliveTimeoutMs,
          Number(timeout[1]) * 1000 - KEEP_ALIVE_MARGIN_MS,
        );
      }
    }
  }
  request.responded = true;
  if (!request.handler.onHeaders(statusCode, headers, request.resume)) pauseResponse(connection);
  return request.isHead ? 1 : 0;
}

function failEndlessInterim(connection: ParsingConnection): void {
  connection.fail(
    new UpstreamFailure('protocol-error', `more than ${MAX_INTERIM_RESPONSES} interim (1xx) responses`),
  );
}

function failUnexpectedUpgrade(connection: ParsingConnection): void {
  connection.fail(new UpstreamFailure('protocol-error', 'the backend switched protocols unasked'));
}

function pauseResponse(connection: ParsingConnection): void {
  if (connection.paused) return;
  connection.paused = true;
  // The client's slowness is the exchange's send timeout, not the backend's.
  connection.stopResponseTimeout();
  connection.socket.pause();
}

function onParserBody(this: BoundParser, chunk: Buffer): void {
  const request = this[kConnection].request;
  if (request === undefined || request.done) return;
  if (!request.handler.onData(chunk)) pauseResponse(this[kConnection]);
}

function onParserMessageComplete(this: BoundParser): void {
  const connection = this[kConnection];
  const request = connection.request;
  if (request === undefined || request.done || !request.responded || connection.complete) return;
  connection.complete = true;
  request.done = true;
  const trailers = connection.trailers ?? [];
  connection.trailers = undefined;
  request.handler.onComplete(trailers);
}
