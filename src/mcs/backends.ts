import type { LocalIdentity } from '../gateway/options.ts';
import type { BackendCluster } from '../ir/route-table.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';

/**
 * Endpoint resolution for backendRefs, shared by north-south routes and east-west services.
 * Pure: reads the Snapshot, returns IR. Reference checks (kind, ReferenceGrant) are the caller's job
 * (src/gateway); this module answers "which endpoints does this Service/ServiceImport port have".
 */
export type BackendResolution =
  | { readonly ok: true; readonly backend: BackendCluster }
  | {
      readonly ok: false;
      /** Gateway API RouteConditionReason for ResolvedRefs=False. */
      readonly reason: 'BackendNotFound' | 'UnsupportedProtocol';
      readonly message: string;
    };

/** GEP-1748: a Service ref means this cluster's endpoints (EndpointSlices labelled kubernetes.io/service-name). */
export function resolveServiceBackend(
  _snapshot: Snapshot,
  _namespace: string,
  _name: string,
  _port: number,
  _identity: LocalIdentity,
): BackendResolution {
  throw new Error('not implemented yet: src/mcs owner delivers this first');
}

/** GEP-1748: a ServiceImport ref means the clusterset's endpoints (multicluster.kubernetes.io/service-name slices). */
export function resolveServiceImportBackend(
  _snapshot: Snapshot,
  _namespace: string,
  _name: string,
  _port: number,
  _identity: LocalIdentity,
): BackendResolution {
  throw new Error('not implemented yet');
}
