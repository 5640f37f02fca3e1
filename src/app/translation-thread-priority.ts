import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * Lowers the calling thread's scheduling priority by `nice` steps (Linux: a thread is a task with a nice value of
 * its own, named by its id under /proc/thread-self), so that when the cores are all busy the serving thread and
 * the kernel's socket work win them over the translation thread: a table then arrives later, a request is not
 * held up (issue 45). Lowering needs no privilege. Returns the thread's nice value after, or undefined where a
 * thread's priority cannot be set (not Linux, /proc not mounted): it then runs as before.
 */
export function lowerThreadPriority(nice: number): number | undefined {
  if (nice <= 0) return undefined;
  let threadId: number;
  try {
    threadId = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
  } catch {
    return undefined;
  }
  if (!Number.isInteger(threadId) || threadId <= 0) return undefined;
  try {
    const lowered = Math.min(19, getPriority(threadId) + nice);
    setPriority(threadId, lowered);
    return getPriority(threadId);
  } catch {
    return undefined;
  }
}
