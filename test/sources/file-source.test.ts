import { mkdtemp, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../src/snapshot/snapshot.ts';
import { FileSource, type FileSourceOptions, formatProblem } from '../../src/sources/file/file-source.ts';
import { readBounded } from '../../src/sources/file/manifest-folder.ts';

const service = (name: string) =>
  `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\n  namespace: ns\nspec:\n  ports: [{port: 80}]\n`;

describe('FileSource', () => {
  let dir: string;
  let source: FileSource | undefined;
  afterEach(async () => {
    await source?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function startSource(): Promise<void> {
    dir = await mkdtemp(join(tmpdir(), 'file-source-'));
  }

  function collect(options: Partial<FileSourceOptions> = {}): {
    snapshots: Snapshot[];
    waitFor: (pred: (s: Snapshot) => boolean) => Promise<Snapshot>;
  } {
    const snapshots: Snapshot[] = [];
    const waiters: { pred: (s: Snapshot) => boolean; resolve: (s: Snapshot) => void }[] = [];
    // No debounce: the test waits for each snapshot (an event), never for a timer on the wall clock.
    source = new FileSource({ dir, logger: pino({ level: 'silent' }), debounceMs: 0, ...options });
    const onSnapshot = (snapshot: Snapshot) => {
      snapshots.push(snapshot);
      for (const waiter of waiters.splice(0)) {
        if (waiter.pred(snapshot)) waiter.resolve(snapshot);
        else waiters.push(waiter);
      }
    };
    void source.start(onSnapshot);
    return {
      snapshots,
      waitFor: (pred) => {
        const hit = snapshots.find(pred);
        if (hit) return Promise.resolve(hit);
        return new Promise((resolve) => waiters.push({ pred, resolve }));
      },
    };
  }

  it('loads the folder, then follows edits, atomic renames and deletions', async () => {
    await startSource();
    await writeFile(join(dir, 'a.yaml'), service('one'));
    const { waitFor } = collect();
    await waitFor((s) => s.get('Service', 'ns', 'one') !== undefined);

    await writeFile(join(dir, '.b.yaml.tmp'), service('two'));
    await rename(join(dir, '.b.yaml.tmp'), join(dir, 'b.yaml'));
    const both = await waitFor((s) => s.get('Service', 'ns', 'two') !== undefined);
    expect(both.services.map((s) => s.metadata.name)).toEqual(['one', 'two']);

    await rm(join(dir, 'a.yaml'));
    const after = await waitFor((s) => s.get('Service', 'ns', 'one') === undefined);
    expect(after.services.map((s) => s.metadata.name)).toEqual(['two']);
  });

  it('keeps the last good objects of a file that stops parsing, and reports file and line', async () => {
    await startSource();
    await writeFile(join(dir, 'a.yaml'), service('one'));
    const { waitFor, snapshots } = collect();
    await waitFor((s) => s.get('Service', 'ns', 'one') !== undefined);
    await writeFile(join(dir, 'a.yaml'), `${service('one')}---\nkind: Service\nmetadata: {name: [x\n`);
    await waitFor(() => (source?.problems.length ?? 0) > 0);
    expect(source?.problems[0]).toMatchObject({ file: 'a.yaml', line: 11 });
    expect(snapshots.at(-1)?.get('Service', 'ns', 'one')).toBeDefined();
  });

  it('an edit that adds lines above a refused object and a duplicate names their new lines; the rest stays as it was', async () => {
    await startSource();
    // Written as an editor saves (a whole new file renamed over the old): no reload sees half a file.
    const replaceFile = async (name: string, text: string) => {
      await writeFile(join(dir, `.${name}.tmp`), text);
      await rename(join(dir, `.${name}.tmp`), join(dir, name));
    };
    const bad = service('bad').replace('port: 80', 'port: 70000');
    await writeFile(join(dir, 'a.yaml'), `${service('one')}---\n${service('bad')}---\n${service('two')}`);
    await writeFile(join(dir, 'b.yaml'), service('two'));
    const { waitFor, snapshots } = collect();
    await waitFor((s) => s.get('Service', 'ns', 'two') !== undefined);
    await replaceFile('a.yaml', `${service('one')}---\n${bad}---\n${service('two')}`);
    await waitFor(() => (source?.problems.length ?? 0) > 1);
    const problems = () => (source?.problems ?? []).map(formatProblem);
    expect(problems()).toEqual([
      'b.yaml:1: duplicate Service ns/two: a.yaml:17 has it already; this one is ignored',
      'a.yaml:15: Service ns/bad (the last valid version stays in effect): spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive',
    ]);
    const before = snapshots.at(-1) as Snapshot;
    // Three lines added to the first document: `bad` and `two` are kept as parsed, three lines further down.
    const one = service('one').replace('port: 80', 'port: 81').replace('spec:', '# a\n# b\n# c\nspec:');
    await replaceFile('a.yaml', `${one}---\n${bad}---\n${service('two')}`);
    const after = await waitFor((s) => s.get('Service', 'ns', 'one')?.spec?.ports?.[0]?.port === 81);
    expect(problems()).toEqual([
      'b.yaml:1: duplicate Service ns/two: a.yaml:20 has it already; this one is ignored',
      'a.yaml:18: Service ns/bad (the last valid version stays in effect): spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive',
    ]);
    expect(after.get('Service', 'ns', 'bad')?.spec?.ports?.[0]?.port).toBe(80);
    expect(after.get('Service', 'ns', 'bad')).toBe(before.get('Service', 'ns', 'bad'));
    expect(after.get('Service', 'ns', 'two')).toBe(before.get('Service', 'ns', 'two'));
  });

  it('parses only the files that changed: unchanged objects stay the same objects, validated once', async () => {
    await startSource();
    await writeFile(join(dir, 'a.yaml'), `${service('one')}---\n${service('two')}`);
    await writeFile(join(dir, 'b.yaml'), service('three'));
    const { waitFor } = collect();
    const first = await waitFor((s) => s.get('Service', 'ns', 'three') !== undefined);
    const edited = `${service('one')}---\n${service('two').replace('port: 80', 'port: 81')}`;
    await writeFile(join(dir, 'a.yaml'), edited);
    const next = await waitFor((s) => s.get('Service', 'ns', 'two')?.spec?.ports?.[0]?.port === 81);
    // b.yaml was not parsed again; `one` was parsed again from the same text.
    expect(next.get('Service', 'ns', 'three')).toBe(first.get('Service', 'ns', 'three'));
    expect(next.get('Service', 'ns', 'one')).toBe(first.get('Service', 'ns', 'one'));
    expect(next.get('Service', 'ns', 'two')).not.toBe(first.get('Service', 'ns', 'two'));
    expect(next.get('Service', 'ns', 'two')?.metadata.uid).toBe(
      first.get('Service', 'ns', 'two')?.metadata.uid,
    );
  });

  it('does not read a file again while its stamp is unchanged and no event names it', async () => {
    await startSource();
    await writeFile(join(dir, 'a.yaml'), service('one'));
    await writeFile(join(dir, 'b.yaml'), service('two'));
    const reads: string[] = [];
    const { waitFor } = collect({
      readFile: (path, max) => {
        reads.push(basename(path));
        return readBounded(path, max);
      },
    });
    const first = await waitFor((s) => s.get('Service', 'ns', 'two') !== undefined);
    for (const port of [81, 82, 83]) {
      await writeFile(join(dir, '.b.tmp'), service('two').replace('port: 80', `port: ${port}`));
      await rename(join(dir, '.b.tmp'), join(dir, 'b.yaml'));
      await waitFor((s) => s.get('Service', 'ns', 'two')?.spec?.ports?.[0]?.port === port);
    }
    expect(reads.filter((file) => file === 'a.yaml')).toEqual(['a.yaml']);
    expect(reads.filter((file) => file === 'b.yaml').length).toBeGreaterThanOrEqual(4);
    const last = await waitFor((s) => s.get('Service', 'ns', 'two')?.spec?.ports?.[0]?.port === 83);
    expect(last.get('Service', 'ns', 'one')).toBe(first.get('Service', 'ns', 'one'));
  });

  it('reads a file edited to the same size with its mtime put back', async () => {
    await startSource();
    const file = join(dir, 'a.yaml');
    await writeFile(file, service('one'));
    const { mtime } = await stat(file);
    const { waitFor } = collect();
    await waitFor((s) => s.get('Service', 'ns', 'one') !== undefined);
    await writeFile(file, service('two').replace('two', 'owt'));
    await utimes(file, mtime, mtime);
    const next = await waitFor((s) => s.get('Service', 'ns', 'owt') !== undefined);
    expect(next.get('Service', 'ns', 'one')).toBeUndefined();
  });

  it('fails to start with a clear error when the folder does not exist', async () => {
    dir = join(tmpdir(), 'does-not-exist-clusterset-gateway');
    source = new FileSource({ dir, logger: pino({ level: 'silent' }) });
    await expect(source.start(() => {})).rejects.toMatchObject({ code: 'ManifestDirUnreadable' });
    source = undefined;
  });
});
