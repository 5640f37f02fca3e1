import { changedWindow } from '../ir/changed-window.ts';
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
  /**
   * What the next collection of the same backend may start from (pass it as `previous`); absent when the
   * endpoints had duplicates (the next collection dedupes them all again).
   */
  readonly next?: CollectionBase;
}

/**
 * One collection without duplicate keys, for the next to change by the slices that changed. Used once: the
 * collection that starts from it takes over its key index.
 */
export interface CollectionBase {
  readonly portName: string;
  /** What each source offered, in source order. */
  readonly offered: readonly SliceEndpoints[];
  /** Ready ones, or (none ready anywhere) serving-and-terminating ones. */
  readonly readyOnly: boolean;
  readonly readyCount: number;
  readonly endpoints: readonly UpstreamEndpoint[];
  /** Every endpoint of `endpoints` by key (each key is there once). */
  readonly keys: Map<string, UpstreamEndpoint>;
  used: boolean;
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
 *
 * With `previous` (the same backend's last collection), only the sources whose offer changed are read: the
 * result is the same as without it, and every endpoint of an unchanged slice is the same object as before.
 */
export function collectEndpoints(
  sources: readonly SliceSource[],
  options: CollectOptions,
  previous?: CollectionBase,
): CollectedEndpoints {
  const wanted = options.portName ?? '';
  const offered = sources.map((source) => sliceEndpoints(source, wanted));
  if (previous !== undefined && !previous.used && previous.portName === wanted) {
    previous.used = true;
    const changed = collectChanged(previous, offered);
    if (changed !== undefined) return changed;
  }
  return collectAll(offered, wanted, options);
}

function collectAll(
  offered: readonly SliceEndpoints[],
  wanted: string,
  options: CollectOptions,
): CollectedEndpoints {
  const ready: UpstreamEndpoint[] = [];
  const servingOnly: UpstreamEndpoint[] = [];
  for (const offer of offered) {
    for (const endpoint of offer.ready) ready.push(endpoint);
    for (const endpoint of offer.servingOnly) servingOnly.push(endpoint);
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
  if (seen.size < chosen.length) return { endpoints: [...seen.values()], warnings };
  const next: CollectionBase = {
    portName: wanted,
    offered,
    readyOnly: ready.length > 0,
    readyCount: ready.length,
    endpoints: chosen,
    keys: seen,
    used: false,
  };
  return { endpoints: chosen, warnings, next };
}

/**
 * `base` changed in the window of sources whose offer is another object: its keys out, the window's keys in,
 * the window's endpoints spliced in. Undefined (collect them all) when the change brings a duplicate or
 * switches between ready and serving-and-terminating endpoints.
 */
function collectChanged(
  base: CollectionBase,
  offered: readonly SliceEndpoints[],
): CollectedEndpoints | undefined {
  const window = changedWindow(base.offered, offered);
  const listOf = (offer: SliceEndpoints) => (base.readyOnly ? offer.ready : offer.servingOnly);
  let readyCount = base.readyCount;
  for (let i = window.start; i < window.beforeEnd; i++) readyCount -= base.offered[i]!.ready.length;
  for (let i = window.start; i < window.afterEnd; i++) readyCount += offered[i]!.ready.length;
  if (readyCount > 0 !== base.readyOnly) return undefined;
  let offset = 0;
  for (let i = 0; i < window.start; i++) offset += listOf(base.offered[i]!).length;
  let removed = 0;
  const keys = base.keys;
  for (let i = window.start; i < window.beforeEnd; i++) {
    for (const endpoint of listOf(base.offered[i]!)) {
      keys.delete(endpoint.key);
      removed++;
    }
  }
  const added: UpstreamEndpoint[] = [];
  for (let i = window.start; i < window.afterEnd; i++) {
    for (const endpoint of listOf(offered[i]!)) {
      if (keys.has(endpoint.key)) return undefined;
      keys.set(endpoint.key, endpoint);
      added.push(endpoint);
    }
  }
  // Three copies of contiguous runs, not 50,000 pushes.
  const endpoints = base.endpoints.slice(0, offset).concat(added, base.endpoints.slice(offset + removed));
  const next: CollectionBase = { ...base, offered, readyCount, endpoints, keys, used: false };
  return { endpoints, warnings: [], next };
}

export interface SliceEndpoints {
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
