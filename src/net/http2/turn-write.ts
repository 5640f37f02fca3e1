/**
 * How the js codec writes a turn's frames to a stream (a socket, TLS or plain, or a tunnel's Duplex). A turn of
 * small frames (a gRPC call's HEADERS, DATA and trailers; a small response) is copied into one buffer and
 * written once: one write request, no cork queue entry per frame and no writev arrays. A larger turn (DATA at
 * full frame size) is written corked, frame by frame, without copying its payload.
 */

/** A turn up to this many bytes is copied into one buffer. */
export const COALESCE_MAX_BYTES = 16 * 1024;

/**
 * The turns' copies are cut from this slab, shared by all connections; a full slab is left to its views and a new
 * one taken, so a region handed to a write is never written again.
 */
const SLAB_SIZE = 64 * 1024;
let slab = Buffer.allocUnsafe(SLAB_SIZE);
let slabUsed = 0;

/** What `writeTurn` needs of a writable stream. */
export interface TurnSink {
  write(chunk: Buffer): boolean;
  cork(): void;
  uncork(): void;
}

/** Writes a turn's frames, in order, to `sink`. */
export function writeTurn(sink: TurnSink, chunks: readonly Buffer[]): void {
  const count = chunks.length;
  if (count === 1) {
    sink.write(chunks[0]!);
    return;
  }
  let bytes = 0;
  for (let i = 0; i < count; i++) bytes += chunks[i]!.length;
  if (bytes <= COALESCE_MAX_BYTES) {
    sink.write(coalesce(chunks, bytes));
    return;
  }
  sink.cork();
  for (let i = 0; i < count; i++) sink.write(chunks[i]!);
  sink.uncork();
}

/** The chunks copied, in order, into one view of the slab. */
export function coalesce(chunks: readonly Buffer[], bytes: number): Buffer {
  if (slabUsed + bytes > SLAB_SIZE) {
    slab = Buffer.allocUnsafe(SLAB_SIZE);
    slabUsed = 0;
  }
  const start = slabUsed;
  let at = start;
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i]!;
    slab.set(chunk, at);
    at += chunk.length;
  }
  slabUsed = at;
  return slab.subarray(start, at);
}
