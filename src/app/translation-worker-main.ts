import { parentPort, workerData } from 'node:worker_threads';
import { encodeResultDelta } from '../controller/result-delta.ts';
import type { TranslateOptions } from '../gateway/options.ts';
import { TranslationMemo } from '../gateway/route-memo.ts';
import { type TranslationResult, translate } from '../gateway/translate.ts';
import { runAllSteps } from '../ir/steps.ts';
import { isLocalAddress } from '../net/local-addresses.ts';
import type { AnyResource, ResourceKind } from '../snapshot/resources.ts';
import { SnapshotMirror } from '../snapshot/snapshot-changes.ts';
import { packTexts } from './packed-texts.ts';
import type { FromTranslationThread, ToTranslationThread } from './translation-thread.ts';
import { lowerThreadPriority } from './translation-thread-priority.ts';

// Entry point of the translation thread (translation-thread.ts): a mirror of the serving thread's snapshot,
// moved on by the changes it is sent, and the pure translator run on it in one go. The answer is the result's
// difference from the last result sent (result-delta.ts), when the serving thread says it holds that one.
const port = parentPort;
if (port === null) throw new Error('translation-worker-main.ts runs as a worker thread');
lowerThreadPriority((workerData as { readonly nice?: number } | null)?.nice ?? 0);
const mirror = new SnapshotMirror();
/** Each route's translation, kept while nothing else changes: an edit translates its route alone. */
const memo = new TranslationMemo();
let set: AnyResource[] = [];
let removed: (readonly [ResourceKind, string])[] = [];
/** The last result sent, and its id. */
let sent: { readonly id: number; readonly result: TranslationResult } | undefined;

port.on('message', (message: ToTranslationThread) => {
  if (message.type === 'objects') {
    for (const object of message.set) set.push(object);
    for (const key of message.removed) removed.push(key);
    return;
  }
  const { id, reset, slicesOnly } = message;
  let reply: FromTranslationThread;
  let transfer: ArrayBuffer[] = [];
  try {
    const snapshot = mirror.apply({ reset, slicesOnly, set, removed });
    set = [];
    removed = [];
    const { localAddresses, ...rest } = message.options;
    const options: TranslateOptions = { ...rest, ...(localAddresses ? { isLocalAddress } : {}) };
    const result = translate(snapshot, options, memo);
    const base = sent !== undefined && sent.id === message.base ? sent : undefined;
    const pieces = packTexts(runAllSteps(encodeResultDelta(base?.result, result)));
    sent = { id, result };
    reply = { type: 'result', id, base: base?.id ?? 0, pieces };
    transfer = [pieces.buffer];
  } catch (error) {
    set = [];
    removed = [];
    reply = {
      type: 'error',
      id,
      message: error instanceof Error ? (error.stack ?? error.message) : String(error),
    };
  }
  port.postMessage(reply, transfer);
});
