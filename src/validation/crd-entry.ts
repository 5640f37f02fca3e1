import type { CrdDocument } from './schema-types.ts';

/**
 * A CRD the validator compiles when an object of its kind is first checked: what the validator must know before
 * (group, kind, scope, the served versions with a schema) and how to get the whole document, which may read its
 * file again (crd-loader.ts).
 */
export interface CrdEntry {
  readonly name: string;
  readonly group: string;
  readonly kind: string;
  readonly scope: CrdDocument['spec']['scope'];
  /** Served versions that have a schema; the others cannot be validated and count as not served. */
  readonly versions: readonly string[];
  load(): CrdDocument;
}

export function describeCrd(crd: CrdDocument): Omit<CrdEntry, 'load'> {
  const { group, names, scope, versions } = crd.spec;
  return {
    name: crd.metadata?.name ?? `${names.plural}.${group}`,
    group,
    kind: names.kind,
    scope,
    versions: versions.filter((v) => v.served !== false && v.schema?.openAPIV3Schema).map((v) => v.name),
  };
}

/** The entry of a CRD already in memory. */
export function crdEntry(crd: CrdDocument): CrdEntry {
  return { ...describeCrd(crd), load: () => crd };
}
