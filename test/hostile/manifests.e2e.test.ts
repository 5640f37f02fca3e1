import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../src/snapshot/snapshot.ts';
import { FileSource, formatProblem } from '../../src/sources/file/file-source.ts';
import { MANIFEST_CASES, service } from './manifest-corpus.ts';

const silent = pino({ level: 'silent' });

describe('hostile manifests', () => {
  let dir: string | undefined;
  let source: FileSource | undefined;
  afterEach(async () => {
    await source?.stop();
    source = undefined;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function load(
    files: Readonly<Record<string, string | Buffer>>,
    options: { maxObjects?: number } = {},
  ): Promise<{ snapshot: Snapshot; problems: string[]; registry: Registry }> {
    dir = await mkdtemp(join(tmpdir(), 'hostile-manifests-'));
    for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
    const registry = new Registry();
    source = new FileSource({ dir, logger: silent, registry, debounceMs: 20, ...options });
    let snapshot: Snapshot | undefined;
    await source.start((s) => {
      snapshot = s;
    });
    return { snapshot: snapshot!, problems: source.problems.map(formatProblem), registry };
  }

  it.each(MANIFEST_CASES)('$name costs only that file', async ({ files, problems, alsoLoaded = [] }) => {
    const loaded = await load({ 'good.yaml': service('good'), ...files });
    expect(loaded.problems).toEqual(problems);
    expect(loaded.snapshot.services.map((s) => s.metadata.name).sort()).toEqual(
      ['good', ...alsoLoaded].sort(),
    );
    const counted = await loaded.registry
      .getSingleMetric('clusterset_gateway_manifest_problems_total')
      ?.get();
    expect(counted?.values.reduce((n, v) => n + v.value, 0) ?? 0).toBe(problems.length);
  });

  it('caps the objects read from the folder with a clear problem', async () => {
    const five = ['a', 'b', 'c', 'd', 'e'].map((n) => service(n)).join('---\n');
    const loaded = await load({ 'good.yaml': service('good'), 'many.yaml': five }, { maxObjects: 3 });
    expect(loaded.problems).toEqual([
      'many.yaml:1: 5 objects would pass the 3-object limit (--max-manifest-objects); file refused',
    ]);
    expect(loaded.snapshot.services.map((s) => s.metadata.name)).toEqual(['good']);
  });

  it('reads a ConfigMap mounted as a volume: symlinks through ..data are followed', async () => {
    dir = await mkdtemp(join(tmpdir(), 'hostile-manifests-'));
    const stamp = '..2026_12_03_10_00_00.123';
    await mkdir(join(dir, stamp));
    await writeFile(join(dir, stamp, 'routes.yaml'), service('mounted'));
    await symlink(stamp, join(dir, '..data'));
    await symlink('..data/routes.yaml', join(dir, 'routes.yaml'));
    await symlink('..data/missing.yaml', join(dir, 'dangling.yaml'));
    source = new FileSource({ dir, logger: silent, debounceMs: 20 });
    let snapshot: Snapshot | undefined;
    await source.start((s) => {
      snapshot = s;
    });
    expect(snapshot?.services.map((s) => s.metadata.name)).toEqual(['mounted']);
    expect(source.problems).toEqual([]);
  });

  it('keeps the last good version of a file that turns into an alias bomb', async () => {
    dir = await mkdtemp(join(tmpdir(), 'hostile-manifests-'));
    await writeFile(join(dir, 'app.yaml'), service('app'));
    source = new FileSource({ dir, logger: silent, debounceMs: 20 });
    const snapshots: Snapshot[] = [];
    await source.start((s) => snapshots.push(s));
    await writeFile(join(dir, 'app.yaml'), `${service('app')}---\nkind: *undefined\n`);
    while ((source.problems.length ?? 0) === 0) await new Promise((r) => setTimeout(r, 20));
    expect(snapshots.at(-1)?.services.map((s) => s.metadata.name)).toEqual(['app']);
  });
});
