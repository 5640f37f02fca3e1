import type { ConfigWarning, ObjectKey } from '../ir/config-warning.ts';
import { type StatusUpdate, statusKey } from '../ir/status.ts';
import { runAllSteps, type Steps } from '../ir/steps.ts';
import type { Condition, GRPCRoute, HTTPRoute, TCPRoute, TLSRoute, UDPRoute } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { GATEWAY_GROUP, namespaceOf } from './defaults.ts';
import { describeObject } from './guarded.ts';
import type { TranslateOptions } from './options.ts';
import { normalizeParentRef } from './route-attachment.ts';

/** Why an object is not (or not wholly) acted on; each is a problem line of level warning. */
export type UnservedCode =
  /** A route's parentRef names a Gateway or ListenerSet that does not exist. */
  | 'ParentNotFound'
  /** Every Gateway a route names belongs to another controller (or to no GatewayClass): it is served nowhere here. */
  | 'ParentNotOurs'
  /** A Gateway's GatewayClass does not exist: no controller serves it. */
  | 'GatewayClassNotFound'
  /** A policy's targetRef names nothing that exists, or a kind it cannot target. */
  | 'PolicyTargetNotFound'
  /** Translation said so in a status: Accepted=False, ResolvedRefs=False, Conflicted=True, PartiallyInvalid=True. */
  | 'NotAccepted'
  | 'RefsNotResolved'
  | 'Conflicted'
  | 'PartiallyInvalid';

export interface UnservedWarning extends ConfigWarning {
  readonly code: UnservedCode;
  readonly owner: ObjectKey;
}

/** At most this many other names are suggested for a parentRef that names nothing. */
const MAX_SUGGESTIONS = 5;

/**
 * Every object of the snapshot this controller cannot act on, and why (issue 42, "No silent configuration"): what
 * the statuses say was refused, and what has no status at all because nothing here owns it (a route whose
 * Gateway does not exist, a policy whose target does not). Pure; deterministic order, one warning per line.
 */
export function unservedObjects(
  snapshot: Snapshot,
  options: TranslateOptions,
  statuses: readonly StatusUpdate[],
): UnservedWarning[] {
  return runAllSteps(unservedObjectsInSteps(snapshot, options, statuses));
}

/** unservedObjects() as steps (ir/steps.ts): a pause is possible after each route and each status. */
export function* unservedObjectsInSteps(
  snapshot: Snapshot,
  options: TranslateOptions,
  statuses: readonly StatusUpdate[],
): Steps<UnservedWarning[]> {
  const warnings = new Map<string, UnservedWarning>();
  const add = (warning: UnservedWarning): void => {
    warnings.set(warning.message, warning);
  };
  const ourClasses = new Set(
    snapshot.gatewayClasses
      .filter((c) => c.spec?.controllerName === options.controllerName)
      .map((c) => c.metadata.name),
  );
  for (const gateway of snapshot.gateways) {
    const className = gateway.spec?.gatewayClassName ?? '';
    if (snapshot.get('GatewayClass', undefined, className) === undefined) {
      add({
        code: 'GatewayClassNotFound',
        owner: objectKey(gateway),
        message: `${describeObject(gateway)}: spec.gatewayClassName: GatewayClass ${className} not found; no controller serves this Gateway`,
      });
    }
  }
  const routes: AnyRoute[] = [
    ...snapshot.httpRoutes,
    ...snapshot.grpcRoutes,
    ...snapshot.list('TLSRoute'),
    ...snapshot.list('TCPRoute'),
    ...snapshot.list('UDPRoute'),
  ];
  const named = namesByNamespace(snapshot);
  for (const route of routes) {
    yield;
    for (const warning of routeParentWarnings(snapshot, options, ourClasses, named, route)) add(warning);
  }
  for (const warning of backendPolicyTargetWarnings(snapshot, options)) add(warning);
  for (const update of statuses) {
    yield;
    for (const warning of statusWarnings(update)) add(warning);
  }
  return [...warnings.values()];
}

function objectKey(obj: {
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
}): ObjectKey {
  return obj.metadata.namespace
    ? `${obj.kind}/${obj.metadata.namespace}/${obj.metadata.name}`
    : `${obj.kind}/${obj.metadata.name}`;
}

/**
 * A parentRef to a Gateway or ListenerSet that does not exist is always a warning (a typo such as `egde`). A route
 * none of whose parents this controller serves is one warning naming the foreign Gateways: in a cluster shared
 * with another implementation, that implementation's routes are listed too.
 */
function routeParentWarnings(
  snapshot: Snapshot,
  options: TranslateOptions,
  ourClasses: ReadonlySet<string>,
  named: NamesByNamespace,
  route: AnyRoute,
): UnservedWarning[] {
  const refs = Array.isArray(route.spec?.parentRefs) ? route.spec.parentRefs : [];
  const routeNamespace = namespaceOf(route);
  const warnings: UnservedWarning[] = [];
  const foreign: string[] = [];
  let served = false;
  for (const [index, ref] of refs.entries()) {
    const parent = normalizeParentRef(ref, routeNamespace);
    const field = `spec.parentRefs[${index}]`;
    if (parent.group !== GATEWAY_GROUP) {
      // A mesh (GAMMA) parent, a Service: the clusterset listener serves it when it is on.
      if (options.eastWest && (parent.group === '' || parent.group === 'core')) served = true;
      continue;
    }
    if (parent.kind !== 'Gateway' && parent.kind !== 'ListenerSet') continue;
    const kind = parent.kind;
    const found = snapshot.get(kind, parent.namespace, parent.name);
    if (found === undefined) {
      warnings.push({
        code: 'ParentNotFound',
        owner: objectKey(route),
        message: `${describeObject(route)}: ${field}: ${kind} ${parent.namespace}/${parent.name} not found${suggestions(named, kind, parent.namespace)}; the route is not attached there`,
      });
      continue;
    }
    if (found.kind !== 'Gateway') {
      served = true;
      continue;
    }
    const className = found.spec?.gatewayClassName ?? '';
    if (ourClasses.has(className)) {
      served = true;
      continue;
    }
    const gatewayClass = snapshot.get('GatewayClass', undefined, className);
    foreign.push(
      `${field}: Gateway ${parent.namespace}/${parent.name} is of GatewayClass ${className}${
        gatewayClass === undefined
          ? ', which does not exist'
          : ` (controller ${gatewayClass.spec?.controllerName ?? 'unset'})`
      }`,
    );
  }
  if (!served && foreign.length > 0) {
    warnings.push({
      code: 'ParentNotOurs',
      owner: objectKey(route),
      message: `${describeObject(route)}: no parent of this route is served by ${options.controllerName}: ${foreign.join('; ')}`,
    });
  }
  return warnings;
}

type AnyRoute = HTTPRoute | GRPCRoute | TLSRoute | TCPRoute | UDPRoute;

type NamesByNamespace = ReadonlyMap<string, readonly string[]>;

/** The Gateways' and ListenerSets' names by `Kind/namespace`, sorted: indexed once, not once per route. */
function namesByNamespace(snapshot: Snapshot): NamesByNamespace {
  const names = new Map<string, string[]>();
  for (const obj of [...snapshot.gateways, ...snapshot.listenerSets]) {
    const key = `${obj.kind}/${namespaceOf(obj)}`;
    const list = names.get(key);
    if (list) list.push(obj.metadata.name);
    else names.set(key, [obj.metadata.name]);
  }
  for (const list of names.values()) list.sort();
  return names;
}

/** ` (Gateways in shop: edge, internal)`: what a mistyped name may have meant. */
function suggestions(named: NamesByNamespace, kind: 'Gateway' | 'ListenerSet', namespace: string): string {
  const names = named.get(`${kind}/${namespace}`) ?? [];
  if (names.length === 0) return ` (no ${kind} in namespace ${namespace})`;
  const more = names.length > MAX_SUGGESTIONS ? `, and ${names.length - MAX_SUGGESTIONS} more` : '';
  return ` (${kind}s in ${namespace}: ${names.slice(0, MAX_SUGGESTIONS).join(', ')}${more})`;
}

/**
 * BackendTLSPolicy and XBackendTrafficPolicy targets: their statuses list only the Gateways that use a target, so
 * a policy whose target does not exist has no condition anywhere.
 */
function backendPolicyTargetWarnings(snapshot: Snapshot, options: TranslateOptions): UnservedWarning[] {
  const warnings: UnservedWarning[] = [];
  for (const policy of [...snapshot.list('BackendTLSPolicy'), ...snapshot.list('XBackendTrafficPolicy')]) {
    const namespace = namespaceOf(policy);
    for (const [index, ref] of (policy.spec?.targetRefs ?? []).entries()) {
      const group = ref.group ?? '';
      const kind = ref.kind ?? 'Service';
      const isService = group === '' && kind === 'Service';
      const isImport = options.serviceImportKinds.some((k) => k.group === group && k.kind === kind);
      const field = `spec.targetRefs[${index}]`;
      let why: string | undefined;
      if (!isService && !isImport)
        why = `${group || 'core'}/${kind} is not a kind this policy can target here`;
      else if (snapshot.get(isService ? 'Service' : 'ServiceImport', namespace, ref.name) === undefined)
        why = `${kind} ${namespace}/${ref.name} not found`;
      if (why === undefined) continue;
      warnings.push({
        code: 'PolicyTargetNotFound',
        owner: objectKey(policy),
        message: `${describeObject(policy)}: ${field}: ${why}; the policy applies to no backend there`,
      });
    }
  }
  return warnings;
}

/** What a status says is not acted on: each condition that refuses, once per object and message. */
function statusWarnings(update: StatusUpdate): UnservedWarning[] {
  const key = statusKey(update) as ObjectKey;
  const name = update.namespace ? `${update.namespace}/${update.name}` : update.name;
  const object = `${update.kind} ${name}`;
  const status = update.status as {
    readonly conditions?: readonly Condition[];
    readonly listeners?: readonly { readonly name: string; readonly conditions: readonly Condition[] }[];
    readonly parents?: readonly { readonly conditions: readonly Condition[] }[];
    readonly ancestors?: readonly { readonly conditions: readonly Condition[] }[];
  };
  const found: { where: string; condition: Condition }[] = [];
  for (const condition of status.conditions ?? []) found.push({ where: '', condition });
  for (const listener of status.listeners ?? [])
    for (const condition of listener.conditions)
      found.push({ where: `listener ${listener.name}: `, condition });
  // A route's and a policy's conditions repeat per parent (ancestor); their messages name the field.
  for (const parent of [...(status.parents ?? []), ...(status.ancestors ?? [])])
    for (const condition of parent.conditions) found.push({ where: '', condition });
  const warnings: UnservedWarning[] = [];
  for (const { where, condition } of found) {
    const code = refusal(update, condition);
    if (code === undefined) continue;
    warnings.push({
      code,
      owner: key,
      message: `${object}: ${where}${condition.type}=${condition.status} ${condition.reason}: ${condition.message}`,
    });
  }
  return warnings;
}

function refusal(update: StatusUpdate, condition: Condition): UnservedCode | undefined {
  if (condition.status === 'False' && condition.type === 'Accepted') return 'NotAccepted';
  if (condition.status === 'False' && condition.type === 'ResolvedRefs') return 'RefsNotResolved';
  if (condition.status === 'True' && condition.type === 'Conflicted') return 'Conflicted';
  if (condition.status === 'True' && condition.type === 'PartiallyInvalid') return 'PartiallyInvalid';
  // Accepted for the targets that exist: the missing and conflicted ones are named in the message.
  if (
    update.kind === 'ClusterSelectionPolicy' &&
    condition.type === 'Accepted' &&
    condition.status === 'True' &&
    condition.message.startsWith('Policy accepted for some targets')
  )
    return condition.message.includes('not found: ') ? 'PolicyTargetNotFound' : 'Conflicted';
  return undefined;
}
