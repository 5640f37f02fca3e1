import { parentPort } from 'node:worker_threads';
import type { TranslateOptions } from '../gateway/options.ts';
import { translate } from '../gateway/translate.ts';
import { isLocalAddress } from '../net/local-addresses.ts';
import type { AnyResource, ResourceKind } from '../snapshot/resources.ts';
import { SnapshotMirror } from '../snapshot/snapshot-changes.ts';
import { encodeChunked } from './chunked-json.ts';
import type { FromTranslationThread, ToTranslationThread } from './translation-thread.ts';

// Entry point of the translation thread (translation-thread.ts): a mirror of the serving thread's snapshot,
// moved on by the changes it is sent, and the pure translator run on it in one go.
const port = parentPort;
if (port === null) throw new Error('translation-worker-main.ts runs as a worker thread');
const mirror = new SnapshotMirror();
let set: AnyResource[] = [];
let removed: (readonly [ResourceKind, string])[] = [];

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
    const result = encodeChunked(translate(snapshot, options));
    reply = { type: 'result', id, result };
    transfer = [result.buffer];
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
