import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, type Stats, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as JsYaml from 'js-yaml';
import { type CrdEntry, describeCrd } from './crd-entry.ts';
import { scanCrds } from './crd-scan.ts';
import type { CrdDocument } from './schema-types.ts';

/** deploy/crds of this checkout (or of the installed package): the CRDs the gateway is deployed with. */
export const DEFAULT_CRD_DIR = fileURLToPath(new URL('../../deploy/crds', import.meta.url));
/** The Gateway API experimental channel, which replaces the standard one's CRDs of the same name. */
export const EXPERIMENTAL_CRD_DIR = fileURLToPath(new URL('../../deploy/crds-experimental', import.meta.url));
/**
 * Beside the compiled loader, the build's digest of those two folders (writeCrdBundle): absent when running
 * from the sources, where the YAML is read.
 */
export const CRD_BUNDLE_DIR = fileURLToPath(new URL('./crd-bundle', import.meta.url));

/** Which Gateway API release channel the CRDs come from: the experimental one adds fields (retry, ...). */
export type GatewayApiChannel = 'standard' | 'experimental';

/**
 * deploy/crds, with the experimental channel's Gateway API CRDs in place of the standard ones when asked, as
 * entries that read their file again when first needed: the parsed documents are not kept, so a process holds the
 * compiled schemas of the kinds it meets and nothing of the others.
 */
export function crdChannelEntries(
  channel: GatewayApiChannel,
  bundleDir: string = CRD_BUNDLE_DIR,
): CrdEntry[] {
  const standard = fileEntries(DEFAULT_CRD_DIR, bundleDir);
  if (channel === 'standard') return standard;
  const replacing = new Map(fileEntries(EXPERIMENTAL_CRD_DIR, bundleDir).map((entry) => [entry.name, entry]));
  const merged = standard.map((entry) => replacing.get(entry.name) ?? entry);
  const present = new Set(standard.map((entry) => entry.name));
  for (const [name, entry] of replacing) if (!present.has(name)) merged.push(entry);
  return merged;
}

/** deploy/crds, with the experimental channel's Gateway API CRDs in place of the standard ones when asked. */
export function loadCrdChannel(channel: GatewayApiChannel): CrdDocument[] {
  return crdChannelEntries(channel).map((entry) => entry.load());
}

function fileEntries(dir: string, bundleDir: string): CrdEntry[] {
  const bundle = readBundle(bundleDir, dir);
  const entries: CrdEntry[] = [];
  for (const path of crdFiles(dir)) {
    const bundled = bundle?.get(relative(dir, path));
    if (bundled !== undefined && isUnchanged(bundled, path, statSync(path))) {
      entries.push(
        ...bundled.crds.map(({ json, ...description }) =>
          bundledEntry(description, join(bundleDir, basename(dir), json)),
        ),
      );
      continue;
    }
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
 * The build's digest of a CRD folder (scripts/build.mjs): each YAML file's size, modification time and SHA-256,
 * what describeCrd() says of its CRDs, and each CRD as JSON without descriptions. A process then reads neither
 * the YAML texts (2.6 MB for both channels; scanning them left about 7 MiB of RSS behind) nor a YAML parser, and
 * a kind's first object parses a few KiB of JSON instead of its file's YAML. A file of another size, or of another
 * time and content (an edited CRD), is read as YAML.
 */
interface BundledFile {
  readonly file: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly sha256: string;
  readonly crds: readonly (Omit<CrdEntry, 'load'> & { readonly json: string })[];
}

/** Writes the digest of deploy/crds and deploy/crds-experimental (those present) into `bundleDir`. */
export function writeCrdBundle(bundleDir: string = CRD_BUNDLE_DIR): void {
  rmSync(bundleDir, { recursive: true, force: true });
  for (const dir of [DEFAULT_CRD_DIR, EXPERIMENTAL_CRD_DIR]) {
    if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
    const out = join(bundleDir, basename(dir));
    mkdirSync(out, { recursive: true });
    const files: BundledFile[] = crdFiles(dir).map((path) => {
      const { size, mtimeMs } = statSync(path);
      const sha256 = digest(path);
      const crds = crdsOfFile(path).map((crd) => {
        const description = describeCrd(crd);
        const json = `${description.name}.json`;
        writeFileSync(join(out, json), JSON.stringify(copyWithoutDescriptions(crd)));
        return { ...description, json };
      });
      return { file: relative(dir, path), size, mtimeMs, sha256, crds };
    });
    writeFileSync(join(out, 'index.json'), JSON.stringify(files));
  }
}

function readBundle(bundleDir: string, dir: string): Map<string, BundledFile> | undefined {
  let files: BundledFile[];
  try {
    files = JSON.parse(readFileSync(join(bundleDir, basename(dir), 'index.json'), 'utf8')) as BundledFile[];
  } catch {
    return undefined;
  }
  return new Map(files.map((file) => [file.file, file]));
}

/**
 * The same size and time as when the bundle was written, or the same size and content: a copy (`npm pack`, an
 * image layer, a fresh checkout) keeps the content but not always the time.
 */
function isUnchanged(bundled: BundledFile, path: string, stats: Stats): boolean {
  if (bundled.size !== stats.size) return false;
  return bundled.mtimeMs === stats.mtimeMs || bundled.sha256 === digest(path);
}

function digest(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

function bundledEntry(description: Omit<CrdEntry, 'load'>, jsonPath: string): CrdEntry {
  return { ...description, load: () => JSON.parse(readFileSync(jsonPath, 'utf8')) as CrdDocument };
}

/**
 * The CRDs of one file. These files are the project's own, not user input, so they are read with js-yaml rather
 * than the `yaml` package the manifests go through: for the 2.7 MB of both channels it takes a quarter of the time
 * and, building no document tree, a third of the transient heap (measured: 680 -> 180 ms, +50 -> +17 MiB RSS at
 * start). The core schema resolves plain scalars as the `yaml` package does (YAML 1.2: no timestamps).
 */
function crdsOfFile(path: string): CrdDocument[] {
  const { CORE_SCHEMA, loadAll } = jsYaml();
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

/** js-yaml, loaded on first use (CommonJS, so synchronously): with a fresh bundle a process never needs it. */
function jsYaml(): typeof JsYaml {
  yamlModule ??= createRequire(import.meta.url)('js-yaml') as typeof JsYaml;
  return yamlModule;
}

let yamlModule: typeof JsYaml | undefined;
