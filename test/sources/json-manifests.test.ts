import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../src/snapshot/snapshot.ts';
import { FileSource, formatProblem } from '../../src/sources/file/file-source.ts';

/** A `.json` manifest is JSON: what YAML would forgive there (a trailing comma) is the file's syntax error. */
let dir: string;
let source: FileSource | undefined;
afterEach(async () => {
  await source?.stop();
  source = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function load(files: Record<string, string>): Promise<{ snapshot: Snapshot; problems: string[] }> {
  dir = await mkdtemp(join(tmpdir(), 'json-manifests-'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  source = new FileSource({ dir, logger: pino({ level: 'silent' }), debounceMs: 0 });
  let snapshot: Snapshot | undefined;
  await source.start((s) => {
    snapshot = s;
  });
  return { snapshot: snapshot as Snapshot, problems: source.problems.map(formatProblem) };
}

describe('JSON manifests', () => {
  it('refuses a .json file with a trailing comma at its line; valid JSON and flow-style YAML load', async () => {
    const { problems, snapshot } = await load({
      'bad.json':
        '{"apiVersion": "v1", "kind": "Service",\n "metadata": {"name": "bad", "namespace": "shop"},\n "spec": {"ports": [{"port": 80,}]}}\n',
      'good.json':
        '{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "good", "namespace": "shop"}, "spec": {"ports": [{"port": 80}]}}\n',
      'flow.yaml':
        '{apiVersion: v1, kind: Service, metadata: {name: flow, namespace: shop}, spec: {ports: [{port: 80,}]}}\n',
    });
    expect(problems).toEqual([expect.stringMatching(/^bad\.json:3: invalid JSON: /)]);
    expect([...snapshot.byKey('Service').values()].map((s) => s.metadata.name).sort()).toEqual([
      'flow',
      'good',
    ]);
  });
});
