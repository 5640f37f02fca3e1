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
 * Golden cases for the east-west translation: test/east-west/golden/<case>.in.yaml (plain Kubernetes YAML on
 * top of test/golden/base.yaml) translated with `eastWest: true` gives <case>.out.yaml. `UPDATE_GOLDEN=1`
 * rewrites the outputs; review the diff. They live apart from test/golden because that runner translates
 * with east-west off.
 */
const CASE_DIR = fileURLToPath(new URL('./golden/', import.meta.url));
const BASE = fileURLToPath(new URL('../golden/base.yaml', import.meta.url));
const UPDATE = process.env.UPDATE_GOLDEN === '1';

const OPTIONS: TranslateOptions = {
  controllerName: DEFAULT_CONTROLLER_NAME,
  identity: { cluster: 'east', zone: 'zone-a' },
  serviceImportKinds: DEFAULT_SERVICE_IMPORT_KINDS,
  gatewayAddresses: ['192.0.2.10'],
  eastWest: true,
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

function render(caseFile: string): string {
  const byKey = new Map<string, AnyResource>();
  const key = (o: AnyResource) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  for (const o of readObjects(BASE)) byKey.set(key(o), o);
  for (const o of readObjects(caseFile)) byKey.set(key(o), o);
  const result = translate(new Snapshot(byKey.values()), OPTIONS);
  const plain: unknown = JSON.parse(
    JSON.stringify({
      table: result.table,
      statuses: result.statuses.filter((s) => s.kind !== 'GatewayClass'),
      ...(result.warnings && result.warnings.length > 0 ? { warnings: result.warnings } : {}),
    }),
  );
  return stringify(plain, { sortMapEntries: true, lineWidth: 0 });
}

const cases = readdirSync(CASE_DIR)
  .filter((f) => f.endsWith('.in.yaml'))
  .map((f) => f.slice(0, -'.in.yaml'.length))
  .sort();

describe('east-west golden translation', () => {
  it('has cases', () => {
    expect(cases.length).toBeGreaterThan(0);
  });
  for (const name of cases) {
    it(name, () => {
      const actual = render(`${CASE_DIR}${name}.in.yaml`);
      const outFile = `${CASE_DIR}${name}.out.yaml`;
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
