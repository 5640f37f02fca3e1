/**
 * Writes held until the event loop's poll phase is over, then made back to back (setImmediate runs right after
 * it). Why: on loopback a socket write does the receiving side's work too, and waking a peer that sleeps in
 * epoll_wait (an inter-processor interrupt, costly on a VM) was the largest single cost of a small request. Writes
 * made one per event, with our processing of the next event in between, woke the client and the backend once per
 * write; made together at the end of the phase, the writes after the first find the peer already awake. The
 * writes of a phase are the answers to what it read, so holding them adds no wait: the loop does not block while
 * an immediate is pending. bench/README.md, issue 45, third pass.
 */

/** Something holding a write for the end of the poll phase; flushing twice is harmless (the second is a no-op). */
export interface HeldWrite {
  flushHeld(): void;
}

let queue: HeldWrite[] = [];
let scheduled = false;

/** `holder.flushHeld()` runs once the current poll phase is over, after those queued before it. */
export function flushAtEndOfPoll(holder: HeldWrite): void {
  queue.push(holder);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flushQueue);
  }
}

function flushQueue(): void {
  scheduled = false;
  // Holders queued while this runs (a pipelined request answered at once) wait for the next turn, in order.
  const batch = queue;
  queue = [];
  let next = 0;
  try {
    while (next < batch.length) batch[next++]!.flushHeld();
  } finally {
    if (next < batch.length) {
      queue = batch.slice(next).concat(queue);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flushQueue);
      }
    }
  }
}
