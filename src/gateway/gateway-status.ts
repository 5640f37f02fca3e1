import { isIP } from 'node:net';
import type { GatewayStatus, ListenerStatus, StatusUpdate } from '../ir/status.ts';
import type { Condition, Gateway } from '../snapshot/resources.ts';
import { condition, generationOf, type Problem } from './conditions.ts';
import { namespaceOf } from './defaults.ts';
import { isProgrammed, type ListenerState } from './listeners.ts';

/** Invalid: the Gateway's translation failed unexpectedly (src/gateway/guarded.ts). */
export type GatewayProblem = Problem<'InvalidParameters' | 'Pending' | 'Invalid' | 'UnsupportedAddress'>;

/**
 * Why a Gateway of our class is not accepted as a whole: we take no infrastructure parameters
 * (GatewayInfrastructure.parametersRef: "If the referent cannot be found [...] Accepted=False,
 * InvalidParameters"), and a Gateway of a class that is not Accepted stays Pending.
 */
export function gatewayProblem(
  gateway: Gateway,
  classProblem: string | undefined,
): GatewayProblem | undefined {
  const ref = (
    gateway.spec?.infrastructure as { parametersRef?: { group?: string; kind?: string; name?: string } }
  )?.parametersRef;
  if (ref) {
    return {
      reason: 'InvalidParameters',
      message: `spec.infrastructure.parametersRef ${ref.group ?? ''}/${ref.kind ?? ''} ${ref.name ?? ''}: this controller supports no parameters kind`,
    };
  }
  if (classProblem) {
    return {
      reason: 'Pending',
      message: `GatewayClass ${gateway.spec?.gatewayClassName} is not accepted: ${classProblem}`,
    };
  }
  return undefined;
}

export function gatewayStatus(
  gateway: Gateway,
  listeners: readonly ListenerState[],
  attachedRoutes: ReadonlyMap<string, number>,
  addresses: readonly string[],
  problem: GatewayProblem | undefined,
  attachedListenerSets?: number,
  /** spec.addresses holds an address this host cannot bind (Programmed=False, AddressNotUsable). */
  addressNotUsable?: string,
): StatusUpdate {
  const generation = generationOf(gateway);
  const invalid = listeners.filter((s) => s.unsupported);
  const conditions: Condition[] = [];
  let accepted: boolean;
  if (problem) {
    accepted = false;
    conditions.push(condition('Accepted', false, problem.reason, problem.message, generation));
  } else if (invalid.length > 0) {
    // GatewayReasonListenersNotValid: Accepted stays True while at least one listener is valid.
    accepted = invalid.length < listeners.length;
    const names = invalid.map((s) => s.listener.name).join(', ');
    conditions.push(
      condition('Accepted', accepted, 'ListenersNotValid', `listeners not valid: ${names}`, generation),
    );
  } else {
    accepted = true;
    conditions.push(condition('Accepted', true, 'Accepted', 'Gateway is accepted', generation));
  }
  const programmed = accepted && addressNotUsable === undefined && listeners.some(isProgrammed);
  conditions.push(
    condition(
      'Programmed',
      programmed,
      programmed
        ? 'Programmed'
        : problem?.reason === 'Pending'
          ? 'Pending'
          : accepted && addressNotUsable !== undefined
            ? 'AddressNotUsable'
            : 'Invalid',
      programmed
        ? 'Gateway is programmed'
        : accepted && addressNotUsable !== undefined
          ? addressNotUsable
          : problem
            ? `Gateway is not served: ${problem.message}`
            : 'no listener of this Gateway can be served',
      generation,
    ),
  );
  const status: GatewayStatus = {
    addresses: addresses.map((value) => ({ type: isIP(value) ? 'IPAddress' : 'Hostname', value })),
    conditions,
    listeners: listeners.map((s) => listenerStatus(s, attachedRoutes.get(s.id) ?? 0, generation, accepted)),
    ...(attachedListenerSets !== undefined ? { attachedListenerSets } : {}),
  };
  return {
    kind: 'Gateway',
    namespace: namespaceOf(gateway),
    name: gateway.metadata.name,
    generation,
    status,
  };
}

/**
 * One listener's status. A ListenerSet listener that lost a conflict is not accepted at all (GEP-1713), so
 * then Accepted and Programmed carry the conflict's reason; a Gateway's own conflicting listeners stay Accepted.
 */
export function listenerStatus(
  state: ListenerState,
  attachedRoutes: number,
  generation: number,
  gatewayAccepted: boolean,
): ListenerStatus {
  const name = state.listener.name;
  const programmed = gatewayAccepted && isProgrammed(state);
  const rejectedBy = state.listenerSet !== undefined ? state.conflict : undefined;
  return {
    name,
    attachedRoutes,
    supportedKinds: state.supportedKinds.map((k) => ({ group: k.group, kind: k.kind })),
    conditions: [
      rejectedBy
        ? condition('Accepted', false, rejectedBy.reason, rejectedBy.message, generation)
        : state.unsupported
          ? condition('Accepted', false, state.unsupported.reason, state.unsupported.message, generation)
          : condition('Accepted', true, 'Accepted', `listener ${name} is accepted`, generation),
      condition(
        'Programmed',
        programmed,
        programmed ? 'Programmed' : (rejectedBy?.reason ?? 'Invalid'),
        programmed
          ? `listener ${name} is programmed`
          : `listener ${name} is not served: ${notServedBecause(state)}`,
        generation,
      ),
      state.invalidRefs
        ? condition('ResolvedRefs', false, state.invalidRefs.reason, state.invalidRefs.message, generation)
        : condition(
            'ResolvedRefs',
            true,
            'ResolvedRefs',
            `listener ${name} references are resolved`,
            generation,
          ),
      state.conflict
        ? condition('Conflicted', true, state.conflict.reason, state.conflict.message, generation)
        : condition('Conflicted', false, 'NoConflicts', `listener ${name} has no conflicts`, generation),
    ],
  };
}

function notServedBecause(state: ListenerState): string {
  return (
    state.unsupported?.message ??
    state.conflict?.message ??
    state.invalidRefs?.message ??
    'no supported route kinds'
  );
}
