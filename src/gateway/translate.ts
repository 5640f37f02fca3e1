import type { ConfigWarning } from '../ir/config-warning.ts';
import type { BackendCluster, RouteTable } from '../ir/route-table.ts';
import type { StatusUpdate } from '../ir/status.ts';
import { runAllSteps, type Steps } from '../ir/steps.ts';
import { clusterSelections } from '../mcs/cluster-selection.ts';
import { translateNetworkGateway } from '../mcs/network-gateway-table.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { applyBackendTls } from './backend-tls-policy-apply.ts';
import { applyBackendTrafficPolicies } from './backend-traffic-policy.ts';
import { type ClustersetListenerResult, translateClustersetListener } from './clusterset-listener.ts';
import { type GatewayListenersResult, translateGatewayListeners } from './gateway-listeners.ts';
import { guarded } from './guarded.ts';
import { translateNetworkIdentity } from './network-identity.ts';
import type { TranslateOptions } from './options.ts';
import type { TranslationMemo } from './route-memo.ts';
import { mergeRouteStatuses } from './route-status.ts';
import { unservedObjectsInSteps } from './unserved-objects.ts';

export interface TranslationResult {
  readonly table: RouteTable;
  /** One entry per GatewayClass, Gateway and HTTPRoute this controller owns or that refers to its Gateways. */
  readonly statuses: readonly StatusUpdate[];
  /**
   * What translation could not act on or degraded around: endpoint resolution's warnings, and every object refused
   * or served nowhere (unserved-objects.ts). Problem lines of level warning in /config_dump, the log and metrics.
   */
  readonly warnings?: readonly ConfigWarning[];
  /** Objects whose translation failed unexpectedly and was skipped (each also has a condition). */
  readonly problems?: readonly string[];
}

/**
 * Pure: no I/O, no clock, deterministic order, so golden files can hold its output (docs/ARCHITECTURE.md).
 * Two peer listener steps share the route core (route-core.ts): the Gateway listeners, and the clusterset
 * (east-west) listener when it is on; their tables and route statuses are merged, then BackendTLSPolicies and
 * XBackendTrafficPolicies apply to every backend either step sends to.
 */
export function translate(
  snapshot: Snapshot,
  options: TranslateOptions,
  memo?: TranslationMemo,
): TranslationResult {
  return runAllSteps(translateInSteps(snapshot, options, memo));
}

/**
 * translate() as steps (ir/steps.ts): the same result, with a pause possible after each route. With `memo`, a
 * route translated by an earlier call with that memo, whose inputs are the same, gives the same objects
 * (route-memo.ts).
 */
export function* translateInSteps(
  snapshot: Snapshot,
  options: TranslateOptions,
  memo?: TranslationMemo,
): Steps<TranslationResult> {
  memo?.begin(snapshot, options);
  const gateways = yield* translateGatewayListeners(snapshot, options, memo);
  let result: TranslationResult = gateways;
  if (options.eastWest) {
    const clusterset = guarded(() => translateClustersetListener(snapshot, options));
    result = clusterset.ok
      ? withClusterset(gateways, clusterset.value)
      : { ...gateways, problems: [...gateways.problems, `east-west: ${clusterset.message}`] };
  }
  if (options.networkGateway) {
    const network = guarded(() => translateNetworkGateway(snapshot, options.identity));
    result = network.ok
      ? withNetworkGateway(result, network.value)
      : { ...result, problems: [...(result.problems ?? []), `network gateway: ${network.message}`] };
  }
  const identityRefs = options.networkIdentity;
  if (identityRefs !== undefined) {
    const identity = translateNetworkIdentity(snapshot, identityRefs);
    result = {
      ...result,
      table: { ...result.table, networkIdentity: identity },
      ...(identity.problem !== undefined
        ? { problems: [...(result.problems ?? []), `network identity: ${identity.problem}`] }
        : {}),
    };
  }
  const withTls = guarded(() => applyBackendTls(result, snapshot, options));
  result = withTls.ok
    ? withTls.value
    : { ...result, problems: [...(result.problems ?? []), `BackendTLSPolicy: ${withTls.message}`] };
  const withTraffic = guarded(() => applyBackendTrafficPolicies(result, snapshot, options));
  result = withTraffic.ok
    ? withTraffic.value
    : { ...result, problems: [...(result.problems ?? []), `XBackendTrafficPolicy: ${withTraffic.message}`] };
  const policies = guarded(() => clusterSelectionStatuses(snapshot, options.identity));
  result = policies.ok
    ? { ...result, statuses: [...result.statuses, ...policies.value] }
    : { ...result, problems: [...(result.problems ?? []), `ClusterSelectionPolicy: ${policies.message}`] };
  let unserved: readonly ConfigWarning[];
  try {
    unserved = yield* unservedObjectsInSteps(snapshot, options, result.statuses);
  } catch (error) {
    // A bug here must not cost the table: the warnings are missing, and that is said.
    const detail = error instanceof Error ? error.message : String(error);
    return {
      ...result,
      problems: [...(result.problems ?? []), `unserved objects: translation failed: ${detail}`],
    };
  }
  return { ...result, warnings: [...(result.warnings ?? []), ...unserved] };
}

/** Every ClusterSelectionPolicy's status: whether it attached, its tiers as resolved, what properties lacked. */
function clusterSelectionStatuses(
  snapshot: Snapshot,
  identity: TranslateOptions['identity'],
): StatusUpdate[] {
  return clusterSelections(snapshot, identity).statuses.map((report) => ({
    kind: 'ClusterSelectionPolicy',
    namespace: report.namespace,
    name: report.name,
    generation: report.generation,
    status: {
      conditions: report.conditions,
      tiers: report.tiers,
      clustersWithoutProperties: report.clustersWithoutProperties,
    },
  }));
}

/** The network gateway's services beside the listeners; its backends are its own (`#local` ids). */
function withNetworkGateway(
  result: TranslationResult,
  network: ReturnType<typeof translateNetworkGateway>,
): TranslationResult {
  const backends: Record<string, BackendCluster> = { ...result.table.backends };
  for (const backend of network.backends) backends[backend.id] = backend;
  return {
    ...result,
    table: { ...result.table, backends, networkGateway: network.config },
    warnings: [...(result.warnings ?? []), ...network.warnings],
  };
}

/** Both steps' tables in one: a backend both send to is one cluster, listed where the Gateway side has it. */
function withClusterset(
  gateways: GatewayListenersResult,
  clusterset: ClustersetListenerResult,
): TranslationResult {
  const backends: Record<string, BackendCluster> = { ...gateways.table.backends };
  for (const [id, backend] of clusterset.backends) backends[id] ??= backend;
  return {
    table: { ...gateways.table, backends, clusterset: clusterset.listener },
    statuses: mergeRouteStatuses(gateways.statuses, clusterset.routeStatuses),
    warnings: [...gateways.warnings, ...clusterset.warnings],
    problems: gateways.problems,
  };
}
