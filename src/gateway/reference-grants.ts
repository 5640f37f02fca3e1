import type { Snapshot } from '../snapshot/snapshot.ts';

export interface GrantFrom {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
}

export interface GrantTo {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

/**
 * ReferenceGrant (GEP-709): a reference into another namespace is allowed only when a ReferenceGrant in the
 * target namespace lists the referrer's group, kind and namespace in `from`, and the target's group and kind
 * (and name, when given) in `to`. Same-namespace references need no grant.
 */
export function isReferenceAllowed(snapshot: Snapshot, from: GrantFrom, to: GrantTo): boolean {
  if (from.namespace === to.namespace) return true;
  return snapshot.referenceGrants.some(
    (grant) =>
      grant.metadata.namespace === to.namespace &&
      (grant.spec?.from ?? []).some(
        (f) => f.group === from.group && f.kind === from.kind && f.namespace === from.namespace,
      ) &&
      (grant.spec?.to ?? []).some(
        (t) =>
          (t.group ?? '') === to.group &&
          t.kind === to.kind &&
          (t.name === undefined || t.name === '' || t.name === to.name),
      ),
  );
}
