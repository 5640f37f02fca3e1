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
const kWritesDue = Symbol('h2cWritesDue');
const kEndDue = Symbol('h2cEndDue');

type Body = Readable & { [kSink]?: Writable | undefined; [kWritesDue]?: number; [kEndDue]?: boolean };
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
  (body as Body)[kWritesDue] = 0;
  (body as Body)[kEndDue] = false;
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

/**
 * Each chunk is written one tick after it arrived, and the end right after the last write. Why: node:http2 puts
 * END_STREAM on the last DATA frame only when the stream is ended by the tick after that write; ended later, the
 * end waits for the write's callback (after the session's flush) and leaves in a flush of its own: one more write
 * and one more wake-up of the backend per request. A body read in one piece reaches us as its chunk and its 'end'
 * in either order of ticks; this way a unary call leaves as HEADERS and one DATA frame with END_STREAM, in one
 * write. Chunks keep their order (ticks run in order) and nothing waits for a later loop turn.
 */
function onBodyData(this: Body, chunk: Buffer): void {
  if (this[kSink] === undefined) return;
  this[kWritesDue] = (this[kWritesDue] ?? 0) + 1;
  process.nextTick(writeChunk, this, chunk);
}

function writeChunk(body: Body, chunk: Buffer): void {
  const sink = body[kSink];
  if (sink === undefined) return;
  const due = body[kWritesDue]! - 1;
  body[kWritesDue] = due;
  (sink as Sink)[kActivityMs] = requestDeadlines.coarseNowMs;
  const more = sink.write(chunk);
  if (due === 0 && body[kEndDue] === true) endSink(body, sink);
  else if (!more) {
    body.pause();
    sink.once('drain', onSinkDrain);
  }
}

function onSinkDrain(this: Sink): void {
  this[kSource]?.resume();
}

function onBodyEnd(this: Body): void {
  const sink = this[kSink];
  if (sink === undefined) return;
  if ((this[kWritesDue] ?? 0) > 0) this[kEndDue] = true;
  else endSink(this, sink);
}

function endSink(body: Body, sink: Writable): void {
  stopBody(body, sink);
  sink.end();
}

/** A stream closed under a body still arriving (the backend answered early, or reset): stop writing into it. */
function onSinkClose(this: Sink): void {
  const body = this[kSource];
  if (body !== undefined) stopBody(body, this);
}
