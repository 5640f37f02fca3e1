import type { UpstreamEndpoint } from '../ir/route-table.ts';
import type { Endpoint, EndpointSlice } from '../snapshot/resources.ts';
import type { McsWarning } from './warnings.ts';

/** One EndpointSlice and what we know about where it comes from. */
export interface SliceSource {
  readonly slice: EndpointSlice;
  readonly cluster: string;
  /** Region of the slice's cluster, when known (see cluster-identity.ts for the rule). */
  readonly region?: string;
}

export interface CollectOptions {
  /** `kind/namespace/name:port`, for warning messages. */
  readonly owner: string;
  /** Name of the Service or ServiceImport port; an absent name matches only an unnamed slice port. */
  readonly portName: string | undefined;
  /** Warn when the same address:port appears twice (across clusters it is a real conflict, not churn). */
  readonly warnOnDuplicate: boolean;
}

export interface CollectedEndpoints {
  readonly endpoints: readonly UpstreamEndpoint[];
  readonly warnings: readonly McsWarning[];
}

/**
 * The endpoints a set of slices offers for one port, following the EndpointSlice API rules:
 * - the slice port is the one whose `name` equals the Service port's name (both empty counts as equal); its
 *   `port` is the number to dial (it already is the resolved targetPort);
 * - conditions: `ready` defaults to true, `serving` to `ready`, `terminating` to false;
 * - "all addresses are fungible and clients may choose to only use the first element": we use the first;
 * - ready endpoints are used; only when none is ready in any slice do serving-and-terminating ones stand in,
 *   marked `ready: false` (KEP-1669, as kube-proxy does); the balancer shows them as `serving-terminating`;
 * - the same address:port in several slices is one endpoint; the first slice (by name) wins.
 * Sources must be passed in a deterministic order (slice name).
 */
export function collectEndpoints(
  sources: readonly SliceSource[],
  options: CollectOptions,
): CollectedEndpoints {
  const wanted = options.portName ?? '';
  const ready: UpstreamEndpoint[] = [];
  const servingOnly: UpstreamEndpoint[] = [];
  for (const source of sources) {
    const offered = sliceEndpoints(source, wanted);
    for (const endpoint of offered.ready) ready.push(endpoint);
    for (const endpoint of offered.servingOnly) servingOnly.push(endpoint);
  }
  const chosen = ready.length > 0 ? ready : servingOnly;
  const warnings: McsWarning[] = [];
  const seen = new Map<string, UpstreamEndpoint>();
  for (const endpoint of chosen) {
    const first = seen.get(endpoint.key);
    if (!first) {
      seen.set(endpoint.key, endpoint);
    } else if (options.warnOnDuplicate) {
      warnings.push({
        code: 'DuplicateEndpoint',
        message: `${options.owner}: endpoint ${endpoint.key} appears in clusters ${first.cluster} and ${endpoint.cluster}; using the one from ${first.cluster}`,
      });
    }
  }
  return { endpoints: [...seen.values()], warnings };
}

interface SliceEndpoints {
  readonly ready: readonly UpstreamEndpoint[];
  readonly servingOnly: readonly UpstreamEndpoint[];
}

/**
 * What each slice offers, by port name, cluster and region, kept while the slice object lives (snapshots never
 * change an object, they replace it): a change of one endpoint among 50,000 reads one slice again, not 500, and
 * every other endpoint stays the same object, so comparing the backend before and after is cheap.
 */
const offeredBySlice = new WeakMap<EndpointSlice, Map<string, SliceEndpoints>>();

function sliceEndpoints(source: SliceSource, wanted: string): SliceEndpoints {
  const memoKey = `${wanted}\u0000${source.cluster}\u0000${source.region ?? ''}`;
  let bySource = offeredBySlice.get(source.slice);
  const known = bySource?.get(memoKey);
  if (known !== undefined) return known;
  const ready: UpstreamEndpoint[] = [];
  const servingOnly: UpstreamEndpoint[] = [];
  const slicePort = (source.slice.ports ?? []).find((p) => (p.name ?? '') === wanted);
  if (slicePort?.port !== undefined) {
    for (const endpoint of source.slice.endpoints ?? []) {
      const address = endpoint.addresses[0];
      if (address === undefined || address === '') continue;
      const state = conditionsOf(endpoint);
      // kube-proxy's rule: ready ones, else serving-and-terminating ones; a not-ready endpoint that is not
      // terminating (still starting, or failing its readiness probe) is never used.
      if (!state.ready && !(state.serving && state.terminating)) continue;
      const upstream = toUpstream(endpoint, address, slicePort.port, source, state.ready);
      (state.ready ? ready : servingOnly).push(upstream);
    }
  }
  const offered: SliceEndpoints = { ready, servingOnly };
  if (bySource === undefined) {
    bySource = new Map();
    offeredBySlice.set(source.slice, bySource);
  }
  bySource.set(memoKey, offered);
  return offered;
}

/** EndpointConditions defaults, as the discovery.k8s.io/v1 API documents them. */
export function conditionsOf(endpoint: Endpoint): { ready: boolean; serving: boolean; terminating: boolean } {
  const ready = endpoint.conditions?.ready ?? true;
  const serving = endpoint.conditions?.serving ?? ready;
  const terminating = endpoint.conditions?.terminating ?? false;
  return { ready, serving, terminating };
}

/** `address:port`, with IPv6 addresses bracketed so the key is also a valid URL authority. */
export function endpointKey(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

function toUpstream(
  endpoint: Endpoint,
  address: string,
  port: number,
  source: SliceSource,
  ready: boolean,
): UpstreamEndpoint {
  const pod = endpoint.targetRef?.name;
  return {
    key: endpointKey(address, port),
    address,
    port,
    cluster: source.cluster,
    ...(endpoint.zone ? { zone: endpoint.zone } : {}),
    ...(source.region ? { region: source.region } : {}),
    ...(endpoint.nodeName ? { node: endpoint.nodeName } : {}),
    ...(pod ? { pod } : {}),
    ready,
    weight: 1,
  };
}
