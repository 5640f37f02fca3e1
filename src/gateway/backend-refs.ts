import type { BackendCluster, WeightedBackend } from '../ir/route-table.ts';
import { resolveServiceBackend, resolveServiceImportBackend } from '../mcs/backends.ts';
import type { McsWarning } from '../mcs/warnings.ts';
import type { BackendObjectReference } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import type { Problem } from './conditions.ts';
import { GATEWAY_GROUP } from './defaults.ts';
import type { TranslateOptions } from './options.ts';
import { isReferenceAllowed } from './reference-grants.ts';

/** RouteConditionReason values for ResolvedRefs=False. */
export type ResolvedRefsReason =
  | 'RefNotPermitted'
  | 'InvalidKind'
  | 'BackendNotFound'
  | 'UnsupportedProtocol';

export type BackendRefResult =
  | { readonly ok: true; readonly backend: BackendCluster; readonly warnings: readonly McsWarning[] }
  | ({ readonly ok: false } & Problem<ResolvedRefsReason>);

export interface BackendRefContext {
  readonly snapshot: Snapshot;
  readonly options: TranslateOptions;
  readonly routeNamespace: string;
  /** False for mesh (GAMMA) routes: GEP-1426 lets them reach backends in any namespace without a ReferenceGrant. */
  readonly referenceGrantsRequired?: boolean;
  /** The referring route's kind, for ReferenceGrant `from`; default HTTPRoute. */
  readonly routeKind?: string;
  /** The Service port's protocol to resolve (UDPRoute: UDP); default TCP. */
  readonly transport?: 'TCP' | 'UDP';
}

/**
 * Resolves one BackendObjectReference of an HTTPRoute (defaults: group "", kind Service, the route's
 * namespace). Checks, in order: a kind we support (core Service, or a ServiceImport kind from
 * options.serviceImportKinds, GEP-1748) else InvalidKind; a ReferenceGrant for another namespace else
 * RefNotPermitted; the object and port exist else BackendNotFound.
 */
export function resolveBackendRef(
  ref: BackendObjectReference,
  field: string,
  context: BackendRefContext,
): BackendRefResult {
  const group = ref.group ?? '';
  const kind = ref.kind ?? 'Service';
  const namespace = ref.namespace ?? context.routeNamespace;
  const what = `${field} ${group === '' ? 'core' : group}/${kind} ${namespace}/${ref.name}`;
  const isService = group === '' && kind === 'Service';
  const isServiceImport = context.options.serviceImportKinds.some(
    (k) => k.group === group && k.kind === kind,
  );
  if (!isService && !isServiceImport) {
    return fail('InvalidKind', `${what}: unsupported kind; supported: core/Service, ${importKinds(context)}`);
  }
  const allowed =
    context.referenceGrantsRequired === false ||
    isReferenceAllowed(
      context.snapshot,
      { group: GATEWAY_GROUP, kind: context.routeKind ?? 'HTTPRoute', namespace: context.routeNamespace },
      { group, kind, namespace, name: ref.name },
    );
  if (!allowed) return fail('RefNotPermitted', `${what}: no ReferenceGrant in ${namespace} allows it`);
  if (ref.port === undefined) return fail('BackendNotFound', `${what}: port is required`);
  const resolve = isService ? resolveServiceBackend : resolveServiceImportBackend;
  const resolution = resolve(
    context.snapshot,
    namespace,
    ref.name,
    ref.port,
    context.options.identity,
    context.transport ?? 'TCP',
  );
  if (!resolution.ok) return fail(resolution.reason, `${field}: ${resolution.message}`);
  return { ok: true, backend: resolution.backend, warnings: resolution.warnings ?? [] };
}

function importKinds(context: BackendRefContext): string {
  return (
    context.options.serviceImportKinds.map((k) => `${k.group}/${k.kind}`).join(', ') || 'no ServiceImport'
  );
}

function fail(reason: ResolvedRefsReason, message: string): BackendRefResult {
  return { ok: false, reason, message };
}

/** The backendRefs of a TLS, TCP or UDP route (no matches: a connection has nothing to choose a rule by). */
export interface ResolvedRouteBackends {
  readonly backends: readonly WeightedBackend[];
  readonly clusters: ReadonlyMap<string, BackendCluster>;
  readonly problems: readonly Problem<ResolvedRefsReason>[];
  readonly warnings: readonly McsWarning[];
}

/** Every rule's backendRefs, in order; one that does not resolve stays as an Invalid target with its weight. */
export function resolveRuleBackendRefs(
  rules: readonly {
    readonly backendRefs?: readonly (BackendObjectReference & { readonly weight?: number })[];
  }[],
  context: BackendRefContext,
): ResolvedRouteBackends {
  const backends: WeightedBackend[] = [];
  const clusters = new Map<string, BackendCluster>();
  const problems: Problem<ResolvedRefsReason>[] = [];
  const warnings: McsWarning[] = [];
  for (const [r, rule] of rules.entries()) {
    for (const [b, ref] of (rule.backendRefs ?? []).entries()) {
      const weight = ref.weight ?? 1;
      const result = resolveBackendRef(ref, `spec.rules[${r}].backendRefs[${b}]`, context);
      if (result.ok) {
        clusters.set(result.backend.id, result.backend);
        warnings.push(...result.warnings);
        backends.push({ weight, target: { kind: 'Backend', id: result.backend.id }, filters: [] });
      } else {
        problems.push({ reason: result.reason, message: result.message });
        backends.push({ weight, target: { kind: 'Invalid', reason: result.reason }, filters: [] });
      }
    }
  }
  return { backends, clusters, problems, warnings };
}
