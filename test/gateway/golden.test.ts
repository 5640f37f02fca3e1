import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import {
  DEFAULT_CONTROLLER_NAME,
  DEFAULT_SERVICE_IMPORT_KINDS,
  type TranslateOptions,
} from '../../src/gateway/options.ts';
import { translate } from '../../src/gateway/translate.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';

/**
 * Golden translator cases: test/golden/<case>.in.yaml (plain Kubernetes YAML, on top of the shared objects in
 * test/golden/base.yaml) translates to <case>.out.yaml. Cases named `east-west-*` translate with the east-west
 * listener on. `UPDATE_GOLDEN=1` rewrites the outputs; review the diff.
 */
const GOLDEN_DIR = fileURLToPath(new URL('../golden/', import.meta.url));
const UPDATE = process.env.UPDATE_GOLDEN === '1';

const GOLDEN_OPTIONS: TranslateOptions = {
  controllerName: DEFAULT_CONTROLLER_NAME,
  identity: { cluster: 'east', zone: 'zone-a' },
  serviceImportKinds: DEFAULT_SERVICE_IMPORT_KINDS,
  gatewayAddresses: ['192.0.2.10'],
  eastWest: false,
};

function readObjects(file: string): AnyResource[] {
  const objects: AnyResource[] = [];
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]?.message}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    objects.push(value as AnyResource);
  }
  return objects;
}

/** Case objects replace base objects of the same kind, namespace and name (as `kubectl apply` would). */
function snapshotFor(caseObjects: readonly AnyResource[]): Snapshot {
  const byKey = new Map<string, AnyResource>();
  const key = (o: AnyResource) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  for (const o of readObjects(`${GOLDEN_DIR}base.yaml`)) byKey.set(key(o), o);
  for (const o of caseObjects) byKey.set(key(o), o);
  return new Snapshot(byKey.values());
}

/** PEM blobs are summarised so the goldens stay readable; the digest still pins the exact bytes. */
function summarisePem(_key: unknown, value: unknown): unknown {
  if (typeof value === 'string' && value.startsWith('-----BEGIN')) {
    const kind = /-----BEGIN ([A-Z ]+)-----/.exec(value)?.[1] ?? 'PEM';
    const digest = createHash('sha256').update(value).digest('hex').slice(0, 16);
    return `<${kind} ${value.length} bytes sha256:${digest}>`;
  }
  return value;
}

function renderGolden(name: string): string {
  const caseObjects = readObjects(`${GOLDEN_DIR}${name}.in.yaml`);
  const options = { ...GOLDEN_OPTIONS, eastWest: name.startsWith('east-west-') };
  const result = translate(snapshotFor(caseObjects), options);
  // The base GatewayClass status is the same everywhere; show GatewayClass statuses only where a case is about them.
  const showClasses = caseObjects.some((o) => o.kind === 'GatewayClass');
  const plain: unknown = JSON.parse(
    JSON.stringify({
      table: result.table,
      statuses: result.statuses.filter((s) => showClasses || s.kind !== 'GatewayClass'),
      ...(result.warnings && result.warnings.length > 0 ? { warnings: result.warnings } : {}),
    }),
    summarisePem,
  );
  return stringify(plain, { sortMapEntries: true, lineWidth: 0 });
}

const cases = readdirSync(GOLDEN_DIR)
  .filter((f) => f.endsWith('.in.yaml'))
  .map((f) => f.slice(0, -'.in.yaml'.length))
  .sort();

describe('golden translation', () => {
  it('has cases', () => {
    expect(cases.length).toBeGreaterThan(0);
  });
  for (const name of cases) {
    it(name, () => {
      const actual = renderGolden(name);
      const outFile = `${GOLDEN_DIR}${name}.out.yaml`;
      if (UPDATE || !existsSync(outFile)) {
        writeFileSync(outFile, actual);
        if (!UPDATE)
          throw new Error(`${name}.out.yaml was missing and has been written; review it and rerun`);
        return;
      }
      expect(actual).toBe(readFileSync(outFile, 'utf8'));
    });
  }
});
