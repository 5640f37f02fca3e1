import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { type CrdEntry, describeCrd } from './crd-entry.ts';
import { scanCrds } from './crd-scan.ts';
import type { CrdDocument } from './schema-types.ts';

/** deploy/crds of this checkout (or of the installed package): the CRDs the gateway is deployed with. */
export const DEFAULT_CRD_DIR = fileURLToPath(new URL('../../deploy/crds', import.meta.url));
/** The Gateway API experimental channel, which replaces the standard one's CRDs of the same name. */
export const EXPERIMENTAL_CRD_DIR = fileURLToPath(new URL('../../deploy/crds-experimental', import.meta.url));

/** Which Gateway API release channel the CRDs come from: the experimental one adds fields (retry, ...). */
export type GatewayApiChannel = 'standard' | 'experimental';

/**
 * deploy/crds, with the experimental channel's Gateway API CRDs in place of the standard ones when asked, as
 * entries that read their file again when first needed: the parsed documents are not kept, so a process holds the
 * compiled schemas of the kinds it meets and nothing of the others.
 */
export function crdChannelEntries(channel: GatewayApiChannel): CrdEntry[] {
  const standard = fileEntries(DEFAULT_CRD_DIR);
  if (channel === 'standard') return standard;
  const replacing = new Map(fileEntries(EXPERIMENTAL_CRD_DIR).map((entry) => [entry.name, entry]));
  const merged = standard.map((entry) => replacing.get(entry.name) ?? entry);
  const present = new Set(standard.map((entry) => entry.name));
  for (const [name, entry] of replacing) if (!present.has(name)) merged.push(entry);
  return merged;
}

/** deploy/crds, with the experimental channel's Gateway API CRDs in place of the standard ones when asked. */
export function loadCrdChannel(channel: GatewayApiChannel): CrdDocument[] {
  return crdChannelEntries(channel).map((entry) => entry.load());
}

function fileEntries(dir: string): CrdEntry[] {
  const entries: CrdEntry[] = [];
  for (const path of crdFiles(dir)) {
    const descriptions = scanCrds(readFileSync(path, 'utf8')) ?? crdsOfFile(path).map(describeCrd);
    // Copied: a string cut from the file's text (a name, a regex match, a parsed value) is a slice that keeps the
    // whole text alive; the shipped CRDs' texts are 2.2 MiB an idle process would otherwise hold.
    for (const description of structuredClone(descriptions)) {
      entries.push({
        ...description,
        load: () => {
          const crd = crdsOfFile(path).find((c) => describeCrd(c).name === description.name);
          if (crd === undefined) throw new Error(`${path} no longer holds the CRD ${description.name}`);
          // The compiled schema keeps strings of the document (patterns, enum values, rules): see above.
          return copyWithoutDescriptions(crd);
        },
      });
    }
  }
  return entries;
}

/**
 * A deep copy of a CRD without its schemas' descriptions (a third of the text of the shipped CRDs, and nothing a
 * validator reads). A schema node is an object with a `type`, `properties` or `items` beside its string
 * `description`; a field that is itself named "description" is a schema (an object), and stays.
 */
function copyWithoutDescriptions(crd: CrdDocument): CrdDocument {
  return JSON.parse(JSON.stringify(crd), function (this: Record<string, unknown>, key, value) {
    const schemaNode = 'type' in this || 'properties' in this || 'items' in this;
    return key === 'description' && typeof value === 'string' && schemaNode ? undefined : value;
  });
}

/**
 * The CRDs of one file. These files are the project's own, not user input, so they are read with js-yaml rather
 * than the `yaml` package the manifests go through: for the 2.7 MB of both channels it takes a quarter of the time
 * and, building no document tree, a third of the transient heap (measured: 680 -> 180 ms, +50 -> +17 MiB RSS at
 * start). The core schema resolves plain scalars as the `yaml` package does (YAML 1.2: no timestamps).
 */
function crdsOfFile(path: string): CrdDocument[] {
  const crds: CrdDocument[] = [];
  for (const doc of loadAll(readFileSync(path, 'utf8'), null, { schema: CORE_SCHEMA, filename: path })) {
    const value = doc as { kind?: string } | null;
    if (value?.kind === 'CustomResourceDefinition') crds.push(value as CrdDocument);
  }
  return crds;
}

/** Every CustomResourceDefinition in the YAML files under `dir`, recursively (tests, the API test server). */
export function loadCrds(dir: string = DEFAULT_CRD_DIR): CrdDocument[] {
  return crdFiles(dir).flatMap(crdsOfFile);
}

/** The YAML files under `dir`, recursively, in name order; kustomization.yaml is not a manifest. */
export function crdFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) files.push(...crdFiles(path));
    else if (/\.ya?ml$/.test(entry) && entry !== 'kustomization.yaml') files.push(path);
  }
  return files;
}
