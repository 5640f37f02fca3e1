import { parentPort, workerData } from 'node:worker_threads';
import { type Level, pino } from 'pino';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { snapshotChanges } from '../snapshot/snapshot-changes.ts';
import { SourceError } from '../snapshot/source.ts';
import { FileSource } from '../sources/file/file-source.ts';
import type { FileSourceThreadData, FromFileSourceThread, ToFileSourceThread } from './file-source-thread.ts';
import { lowerThreadPriority } from './translation-thread-priority.ts';

// Entry point of the file source thread (file-source-thread.ts): the FileSource on the manifests folder, each of
// its snapshots sent as what changed from the one sent before (by identity: an object read as before is the same
// object), its problems and log lines sent for the serving thread to log and count.
const port = parentPort;
if (port === null) throw new Error('file-source-worker-main.ts runs as a worker thread');
const data = workerData as FileSourceThreadData;
lowerThreadPriority(data.nice);
const post = (message: FromFileSourceThread): void => port.postMessage(message);

/** Objects per message: each is deserialised on the serving thread in one go. */
const OBJECTS_PER_MESSAGE = 500;

const logger = pino(
  { level: data.logLevel as Level | 'silent', base: null, timestamp: false },
  { write: (line: string) => post({ type: 'log', line }) },
);
const source = new FileSource({
  ...data.options,
  logger,
  // Nothing else runs on this thread: a reload in one go.
  sliceMs: 0,
  problemSink: {
    report: (problems, invalidObjects) =>
      post({
        type: 'problems',
        // As plain data: a problem's line may be a getter of where its document is now.
        problems: problems.map(({ file, line, message, warning }) =>
          warning ? { file, line, message, warning } : { file, line, message },
        ),
        invalidObjects,
      }),
  },
});

let sent: Snapshot | undefined;
function send(snapshot: Snapshot): void {
  const changes = snapshotChanges(sent, snapshot);
  sent = snapshot;
  for (let i = 0; i < changes.set.length || i === 0; i += OBJECTS_PER_MESSAGE)
    post({
      type: 'objects',
      set: changes.set.slice(i, i + OBJECTS_PER_MESSAGE),
      removed: i === 0 ? changes.removed : [],
    });
  post({ type: 'snapshot', reset: changes.reset, slicesOnly: changes.slicesOnly });
}

port.on('message', (message: ToFileSourceThread) => {
  if (message.type === 'stop')
    source.stop().then(
      () => post({ type: 'stopped' }),
      () => post({ type: 'stopped' }),
    );
});

source.start(send).then(
  () => post({ type: 'started' }),
  (error: unknown) =>
    post({
      type: 'failed',
      code: error instanceof SourceError ? error.code : undefined,
      message: error instanceof Error ? error.message : String(error),
    }),
);
