import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { CrdDocument } from './schema-types.ts';

/** deploy/crds of this checkout (or of the installed package): the CRDs the gateway is deployed with. */
export const DEFAULT_CRD_DIR = fileURLToPath(new URL('../../deploy/crds', import.meta.url));
/** The Gateway API experimental channel, which replaces the standard one's CRDs of the same name. */
export const EXPERIMENTAL_CRD_DIR = fileURLToPath(new URL('../../deploy/crds-experimental', import.meta.url));

/** Which Gateway API release channel the CRDs come from: the experimental one adds fields (retry, ...). */
export type GatewayApiChannel = 'standard' | 'experimental';

/** deploy/crds, with the experimental channel's Gateway API CRDs in place of the standard ones when asked. */
export function loadCrdChannel(channel: GatewayApiChannel): CrdDocument[] {
  const crds = loadCrds(DEFAULT_CRD_DIR);
  if (channel === 'standard') return crds;
  const replacing = new Map(loadCrds(EXPERIMENTAL_CRD_DIR).map((crd) => [crd.metadata?.name, crd]));
  const merged = crds.map((crd) => replacing.get(crd.metadata?.name) ?? crd);
  const present = new Set(crds.map((crd) => crd.metadata?.name));
  for (const [name, crd] of replacing) if (!present.has(name)) merged.push(crd);
  return merged;
}

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
