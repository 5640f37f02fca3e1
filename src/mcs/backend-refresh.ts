import { isDeepStrictEqual } from 'node:util';
import type { ObjectKey } from '../ir/config-warning.ts';
import type { BackendCluster } from '../ir/route-table.ts';
import type { EndpointSlice } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import {
  DERIVED_SERVICE_ANNOTATION,
  MCS_SERVICE_NAME_LABEL,
  SERVICE_NAME_LABEL,
} from '../snapshot/well-known-labels.ts';
import { keepCollectionBase, resolveServiceBackend, resolveServiceImportBackend } from './backends.ts';
import type { LocalIdentity } from './cluster-identity.ts';
import type { McsWarning } from './warnings.ts';

/**
 * `Kind/namespace/name` of the Services and ServiceImports whose endpoints a slice feeds (the prefix of their
 * BackendCluster ids), including a ServiceImport that names the slice's Service as its derived Service.
 */
export function backendOwnersOf(slice: EndpointSlice, snapshot: Snapshot): ObjectKey[] {
  const namespace = slice.metadata.namespace ?? 'default';
  const labels = slice.metadata.labels ?? {};
  const owners: ObjectKey[] = [];
  const service = labels[SERVICE_NAME_LABEL];
  if (service) {
    owners.push(`Service/${namespace}/${service}`);
    for (const serviceImport of snapshot.serviceImports) {
      if (
        serviceImport.metadata.namespace === namespace &&
        serviceImport.metadata.annotations?.[DERIVED_SERVICE_ANNOTATION] === service
      )
        owners.push(`ServiceImport/${namespace}/${serviceImport.metadata.name}`);
    }
  }
  const imported = labels[MCS_SERVICE_NAME_LABEL];
  if (imported) owners.push(`ServiceImport/${namespace}/${imported}`);
  return owners;
}

export type BackendRefresh =
  | {
      readonly ok: true;
      /** The backends whose endpoints (tiers) changed, resolved again. */
      readonly backends: readonly BackendCluster[];
      /** Every endpoint warning of the refreshed backends, to replace their earlier ones. */
      readonly warnings: readonly McsWarning[];
    }
  /** The change is more than endpoints (the ref no longer resolves, the protocol moved): translate in full. */
  | { readonly ok: false; readonly reason: string };

/**
 * Resolves again the endpoints of the backends `ids` of `previous`, as Envoy's EDS updates a cluster's
 * endpoints without touching routes. Pure. What translation added after resolution (BackendTLSPolicy's `tls`,
 * XBackendTrafficPolicy's `retryBudget`) is carried over; a backend whose resolution changed in anything but its endpoints fails the refresh.
 */
export function refreshBackends(
  snapshot: Snapshot,
  previous: Readonly<Record<string, BackendCluster>>,
  ids: Iterable<string>,
  identity: LocalIdentity,
): BackendRefresh {
  const backends: BackendCluster[] = [];
  const warnings: McsWarning[] = [];
  for (const id of ids) {
    const old = previous[id];
    if (old === undefined) continue;
    const resolve = old.kind === 'Service' ? resolveServiceBackend : resolveServiceImportBackend;
    const resolution = resolve(
      snapshot,
      old.namespace,
      old.name,
      old.port,
      identity,
      old.transport ?? 'TCP',
      {
        previous: old,
      },
    );
    if (!resolution.ok) return { ok: false, reason: `${id}: ${resolution.message}` };
    const next: BackendCluster = {
      ...resolution.backend,
      ...(old.tls ? { tls: old.tls } : {}),
      ...(old.retryBudget ? { retryBudget: old.retryBudget } : {}),
    };
    if (next.protocol !== old.protocol || !isDeepStrictEqual(next.healthCheck, old.healthCheck))
      return { ok: false, reason: `${id}: more than its endpoints changed` };
    warnings.push(...(resolution.warnings ?? []));
    if (!isDeepStrictEqual(next, old)) backends.push(next);
    else keepCollectionBase(next, old);
  }
  return { ok: true, backends, warnings };
}
