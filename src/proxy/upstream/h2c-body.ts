import type { Readable, Writable } from 'node:stream';
import { requestDeadlines } from './request-deadlines.ts';

/**
 * A client's request body sent into an upstream HTTP/2 stream, the stream's flow control pacing the reads: what
 * `body.pipe(stream)` does for a proxy, with three listeners and no pipe state. A gRPC profile (bench/README.md)
 * had `pipe()` at 5% of the bytes allocated per call: its state, its six listeners and their closures.
 */
const kSink = Symbol('h2cBodySink');
const kSource = Symbol('h2cBodySource');
const kActivityMs = Symbol('h2cActivityMs');

type Body = Readable & { [kSink]?: Writable | undefined };
type Sink = Writable & { [kSource]?: Body | undefined; [kActivityMs]?: number };

/** Stamps a frame sent or received on an upstream stream (its timeout counts from the last one). */
export function stampActivity(stream: Writable): void {
  (stream as Sink)[kActivityMs] = requestDeadlines.coarseNowMs;
}

export function lastActivityMs(stream: Writable): number {
  return (stream as Sink)[kActivityMs] ?? 0;
}

/** Starts sending `body` into `stream`; the stream is ended when the body is. */
export function sendBody(body: Readable, stream: Writable): void {
  (body as Body)[kSink] = stream;
  (stream as Sink)[kSource] = body;
  stream.once('close', onSinkClose);
  body.on('data', onBodyData);
  body.once('end', onBodyEnd);
}

/** Stops sending (the stream failed or was cancelled); what the body still holds stays unread. */
export function stopBody(body: Readable, stream: Writable): void {
  if ((body as Body)[kSink] !== stream) return;
  (body as Body)[kSink] = undefined;
  (stream as Sink)[kSource] = undefined;
  body.removeListener('data', onBodyData);
  body.removeListener('end', onBodyEnd);
  stream.removeListener('drain', onSinkDrain);
  stream.removeListener('close', onSinkClose);
}

function onBodyData(this: Body, chunk: Buffer): void {
  const sink = this[kSink];
  if (sink === undefined) return;
  (sink as Sink)[kActivityMs] = requestDeadlines.coarseNowMs;
  if (!sink.write(chunk)) {
    this.pause();
    sink.once('drain', onSinkDrain);
  }
}

function onSinkDrain(this: Sink): void {
  this[kSource]?.resume();
}

function onBodyEnd(this: Body): void {
  const sink = this[kSink];
  if (sink === undefined) return;
  stopBody(this, sink);
  sink.end();
}

/** A stream closed under a body still arriving (the backend answered early, or reset): stop writing into it. */
function onSinkClose(this: Sink): void {
  const body = this[kSource];
  if (body !== undefined) stopBody(body, this);
}
