import { isIP } from 'node:net';
import type { Gateway } from '../snapshot/resources.ts';
import type { Problem } from './conditions.ts';

export type AddressProblem = Problem<'UnsupportedAddress' | 'AddressNotUsable'>;

/** What a Gateway's `spec.addresses` asks for, checked against what this host can serve. */
export interface RequestedAddresses {
  /** Usable IPAddress values, in spec order. Empty: the gateway picks (also for entries without a value). */
  readonly usable: readonly string[];
  /**
   * UnsupportedAddress (Accepted=False): a type other than IPAddress, or a value that is no IP address.
   * AddressNotUsable (Programmed=False): an IP address this host cannot bind.
   */
  readonly problem: AddressProblem | undefined;
}

/**
 * Gateway.spec.addresses (GatewayStaticAddresses, GatewayAddressEmpty): entries default to type IPAddress; an
 * entry without a value leaves the choice to us. `isLocal` says whether an IP can be bound here; without it
 * (addresses served by someone else's load balancer) every valid IP counts as usable.
 */
export function requestedAddresses(
  gateway: Gateway,
  isLocal: ((address: string) => boolean) | undefined,
): RequestedAddresses {
  const usable: string[] = [];
  const unusable: string[] = [];
  for (const [i, entry] of (gateway.spec?.addresses ?? []).entries()) {
    const type = entry.type ?? 'IPAddress';
    const field = `spec.addresses[${i}]`;
    if (type !== 'IPAddress') {
      return unsupported(`${field}: address type ${type} is not supported; supported: IPAddress`);
    }
    if (entry.value === undefined || entry.value === '') continue;
    if (isIP(entry.value) === 0) {
      return unsupported(`${field}: ${JSON.stringify(entry.value)} is not an IP address`);
    }
    if (isLocal === undefined || isLocal(entry.value)) usable.push(entry.value);
    else unusable.push(entry.value);
  }
  const problem: AddressProblem | undefined =
    unusable.length > 0
      ? {
          reason: 'AddressNotUsable',
          message: `spec.addresses ${unusable.join(', ')} cannot be bound on this host`,
        }
      : undefined;
  return { usable, problem };
}

function unsupported(message: string): RequestedAddresses {
  return { usable: [], problem: { reason: 'UnsupportedAddress', message } };
}
