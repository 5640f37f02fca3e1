import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_CONTROLLER_NAME, DEFAULT_SERVICE_IMPORT_KINDS } from '../../src/gateway/options.ts';
import { type TranslationResult, translate } from '../../src/gateway/translate.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import { decodeResource } from '../../src/sources/decode.ts';

const GOLDEN = new URL('../golden/', import.meta.url);

/** Translates YAML (on top of test/golden/base.yaml) as the controller would. */
export function translateYaml(...texts: string[]): TranslationResult {
  const byKey = new Map<string, AnyResource>();
  for (const text of [readFileSync(new URL('base.yaml', GOLDEN), 'utf8'), ...texts]) {
    for (const doc of parseAllDocuments(text)) {
      const decoded = decodeResource(doc.toJS());
      if (!decoded.ok) continue;
      const o = decoded.object;
      byKey.set(`${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`, o);
    }
  }
  return translate(new Snapshot(byKey.values()), {
    controllerName: DEFAULT_CONTROLLER_NAME,
    identity: { cluster: 'east', zone: 'zone-a' },
    serviceImportKinds: DEFAULT_SERVICE_IMPORT_KINDS,
    gatewayAddresses: ['192.0.2.10'],
    eastWest: false,
  });
}

export function goldenInput(name: string): string {
  return readFileSync(new URL(`${name}.in.yaml`, GOLDEN), 'utf8');
}
