import { readFileSync } from 'node:fs';
import { DEFAULT_CONTROLLER_NAME, DEFAULT_SERVICE_IMPORT_KINDS } from '../../src/gateway/options.ts';
import { type TranslationResult, translate } from '../../src/gateway/translate.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import { parseManifest } from '../../src/sources/file/manifest-parser.ts';

const GOLDEN = new URL('../golden/', import.meta.url);

const BASE = readFileSync(new URL('base.yaml', GOLDEN), 'utf8');

/** Translates YAML (on top of test/golden/base.yaml) read as the file source reads it. */
export function translateYaml(...texts: string[]): TranslationResult {
  return translateObjects(texts.flatMap((text) => parseManifest('case.yaml', text).objects));
}

export function translateObjects(objects: readonly AnyResource[]): TranslationResult {
  const byKey = new Map<string, AnyResource>();
  for (const o of [...parseManifest('base.yaml', BASE).objects, ...objects]) {
    byKey.set(`${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`, o);
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
