import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { CrdDocument } from './schema-types.ts';

/** deploy/crds of this checkout (or of the installed package): the CRDs the gateway is deployed with. */
export const DEFAULT_CRD_DIR = fileURLToPath(new URL('../../deploy/crds', import.meta.url));

/** The one I/O of validation: every CustomResourceDefinition in the YAML files under `dir`, recursively. */
export function loadCrds(dir: string = DEFAULT_CRD_DIR): CrdDocument[] {
  const crds: CrdDocument[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      crds.push(...loadCrds(path));
      continue;
    }
    if (!/\.ya?ml$/.test(entry) || entry === 'kustomization.yaml') continue;
    for (const doc of parseAllDocuments(readFileSync(path, 'utf8'))) {
      const value = doc.toJS() as { kind?: string } | null;
      if (value?.kind === 'CustomResourceDefinition') crds.push(value as CrdDocument);
    }
  }
  return crds;
}
