import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Worker } from 'node:worker_threads';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { FileSourceThread } from '../../src/app/file-source-thread.ts';
import { spawnThread } from '../../src/app/spawn-thread.ts';
import type { Snapshot } from '../../src/snapshot/snapshot.ts';
import { SourceError } from '../../src/snapshot/source.ts';
import { FileSource, formatProblem } from '../../src/sources/file/file-source.ts';

/**
 * Issue 45: the manifests folder read on a thread of its own. The serving thread gets each reload's changed
 * objects and makes the snapshot from the last one: what it holds is what the FileSource on this thread reads,
 * an object not edited stays the same object, and the problems are logged and counted here.
 */
const service = (name: string, port = 80) =>
  `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\n  namespace: ns\nspec:\n  ports: [{port: ${port}}]\n`;
const route = (name: string, host: string) =>
  `apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: ${name}\n  namespace: ns\nspec:\n  parentRefs: [{name: edge}]\n  hostnames: [${host}]\n  rules:\n  - backendRefs: [{name: web, port: 80}]\n`;

/** As an editor saves: a whole new file renamed over the old. */
async function save(dir: string, file: string, text: string): Promise<void> {
  await writeFile(join(dir, `.${file}.tmp`), text);
  await rename(join(dir, `.${file}.tmp`), join(dir, file));
}

/** The objects as data, without what each reading stamps anew (uid, creation time). */
const plain = (snapshot: Snapshot): unknown =>
  [...snapshot.kinds()]
    .sort()
    .map((kind) => [
      kind,
      JSON.parse(
        JSON.stringify(snapshot.list(kind), (key, value: unknown) =>
          key === 'uid' || key === 'creationTimestamp' ? undefined : value,
        ),
      ),
    ]);
const hostOf = (snapshot: Snapshot, name: string): string | undefined =>
  snapshot.get('HTTPRoute', 'ns', name)?.spec?.hostnames?.[0];
const portOf = (snapshot: Snapshot, name: string): number | undefined =>
  snapshot.get('Service', 'ns', name)?.spec?.ports?.[0]?.port;

function collector(): {
  onSnapshot: (s: Snapshot) => void;
  waitFor: (p: (s: Snapshot) => boolean) => Promise<Snapshot>;
  /** The snapshot delivered just before this one. */
  before: (s: Snapshot) => Snapshot | undefined;
} {
  const snapshots: Snapshot[] = [];
  const waiters: { pred: (s: Snapshot) => boolean; resolve: (s: Snapshot) => void }[] = [];
  return {
    onSnapshot: (snapshot) => {
      snapshots.push(snapshot);
      for (const waiter of waiters.splice(0)) {
        if (waiter.pred(snapshot)) waiter.resolve(snapshot);
        else waiters.push(waiter);
      }
    },
    before: (snapshot) => snapshots[snapshots.indexOf(snapshot) - 1],
    waitFor: (pred) => {
      const hit = snapshots.findLast(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve) => waiters.push({ pred, resolve }));
    },
  };
}

/** A pino destination that keeps each JSON line, parsed. */
function capturedLog(): { lines: Record<string, unknown>[]; capture: Writable } {
  const lines: Record<string, unknown>[] = [];
  const capture = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  return { lines, capture };
}

describe('FileSourceThread', () => {
  let dir: string;
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('holds what the source on this thread reads, and keeps every object not edited as the same object', async () => {
    dir = await mkdtemp(join(tmpdir(), 'file-source-thread-'));
    await writeFile(join(dir, 'services.yaml'), `${service('web')}---\n${service('api')}`);
    const routes = Array.from({ length: 30 }, (_, i) => route(`r-${i}`, `h${i}.test`));
    await writeFile(join(dir, 'routes.yaml'), routes.join('---\n'));

    const threaded = new FileSourceThread({ dir, logger: pino({ level: 'silent' }), debounceMs: 0 });
    stops.push(() => threaded.stop());
    const seen = collector();
    await threaded.start(seen.onSnapshot);
    const first = await seen.waitFor((s) => s.httpRoutes.length === 30);

    const inline = new FileSource({ dir, logger: pino({ level: 'silent' }), debounceMs: 0 });
    stops.push(() => inline.stop());
    const read = collector();
    await inline.start(read.onSnapshot);
    expect(plain(first)).toEqual(plain(await read.waitFor(() => true)));

    routes[7] = route('r-7', 'edited.test');
    await save(dir, 'routes.yaml', routes.join('---\n'));
    const second = await seen.waitFor((s) => hostOf(s, 'r-7') === 'edited.test');
    // The snapshot the edit was made on: the thread may have sent another after `first` (a late watch event of
    // the files written before start), with every object kept.
    expect(second.delta?.base).toBe(seen.before(second));
    expect(second.delta?.set).toHaveLength(1);
    for (const object of first.httpRoutes)
      if (object.metadata.name !== 'r-7')
        expect(second.get('HTTPRoute', 'ns', object.metadata.name)).toBe(object);
    expect(second.get('Service', 'ns', 'web')).toBe(first.get('Service', 'ns', 'web'));
    expect(plain(second)).toEqual(plain(await read.waitFor((s) => hostOf(s, 'r-7') === 'edited.test')));

    await rm(join(dir, 'services.yaml'));
    const third = await seen.waitFor((s) => s.services.length === 0);
    expect(third.delta?.removed.map((o) => o.metadata.name).sort()).toEqual(['api', 'web']);
    expect(third.get('HTTPRoute', 'ns', 'r-7')).toBe(second.get('HTTPRoute', 'ns', 'r-7'));
  }, 60_000);

  it('logs and counts problems on the serving thread, with file and line, and keeps the last good objects', async () => {
    dir = await mkdtemp(join(tmpdir(), 'file-source-thread-'));
    await writeFile(join(dir, 'a.yaml'), service('one'));
    const { lines, capture } = capturedLog();
    const registry = new Registry();
    const threaded = new FileSourceThread({
      dir,
      logger: pino({ level: 'info' }, capture),
      registry,
      debounceMs: 0,
    });
    stops.push(() => threaded.stop());
    const seen = collector();
    await threaded.start(seen.onSnapshot);
    await seen.waitFor((s) => s.get('Service', 'ns', 'one') !== undefined);

    await save(dir, 'a.yaml', `${service('one', 81)}---\nkind: Service\nmetadata: {name: [x\n`);
    await seen.waitFor(() => threaded.problems.length > 0);
    const problems = threaded.problems.map(formatProblem);
    expect(problems.length).toBeGreaterThan(0);
    for (const problem of problems) expect(problem).toMatch(/^a\.yaml:11: /);
    // The file does not parse: the objects of its last good version stay.
    expect(portOf(await seen.waitFor(() => true), 'one')).toBe(80);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 50, component: 'file-source', file: 'a.yaml', line: 11 }),
    );
    const counted = await registry.getSingleMetric('clusterset_gateway_manifest_problems_total')?.get();
    expect(counted?.values).toEqual([
      expect.objectContaining({ value: problems.length, labels: { reason: 'manifest' } }),
    ]);

    await save(dir, 'a.yaml', service('one', 82));
    await seen.waitFor((s) => portOf(s, 'one') === 82);
    expect(threaded.problems).toEqual([]);
    expect(lines.at(-1)).toMatchObject({ level: 30, msg: 'manifest problems resolved' });
  }, 60_000);

  it('fails to start on a folder that cannot be read, as the source on this thread does', async () => {
    dir = await mkdtemp(join(tmpdir(), 'file-source-thread-'));
    const threaded = new FileSourceThread({ dir: join(dir, 'missing'), logger: pino({ level: 'silent' }) });
    stops.push(() => threaded.stop());
    const failed = await threaded.start(() => {}).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(SourceError);
    expect(failed).toMatchObject({
      code: 'ManifestDirUnreadable',
      message: expect.stringContaining('no such folder'),
    });
  }, 60_000);

  it('a thread that dies is started again, reads the folder anew and goes on following edits', async () => {
    dir = await mkdtemp(join(tmpdir(), 'file-source-thread-'));
    await writeFile(join(dir, 'a.yaml'), service('one'));
    const { lines, capture } = capturedLog();
    const threads: Worker[] = [];
    const threaded = new FileSourceThread({
      dir,
      logger: pino({ level: 'info' }, capture),
      debounceMs: 0,
      spawn: (entry, data) => {
        const worker = spawnThread(entry, data);
        threads.push(worker);
        return worker;
      },
    });
    stops.push(() => threaded.stop());
    const seen = collector();
    await threaded.start(seen.onSnapshot);
    await seen.waitFor((s) => portOf(s, 'one') === 80);

    await threads[0]!.terminate();
    // Edited while no thread reads the folder: the new thread's first reading has it.
    await save(dir, 'a.yaml', service('one', 81));
    await seen.waitFor((s) => portOf(s, 'one') === 81);
    expect(threads).toHaveLength(2);
    expect(lines.some((l) => l.msg === 'file source thread stopped; starting another')).toBe(true);

    await save(dir, 'b.yaml', service('two'));
    const last = await seen.waitFor((s) => portOf(s, 'two') === 80);
    expect(portOf(last, 'one')).toBe(81);

    // A folder gone when the thread dies: starting again is retried until it is back.
    await rename(dir, `${dir}.away`);
    await threads[1]!.terminate();
    while (!lines.some((l) => l.msg === 'starting the file source thread again failed; trying again'))
      await new Promise((resolve) => setTimeout(resolve, 50));
    await rename(`${dir}.away`, dir);
    await save(dir, 'a.yaml', service('one', 82));
    await seen.waitFor((s) => portOf(s, 'one') === 82 && portOf(s, 'two') === 80);
  }, 60_000);
});
