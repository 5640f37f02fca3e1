import { compareStrings } from '../snapshot/object-order.ts';
import type { TranslateOptions } from './options.ts';

/**
 * The addresses each Gateway reports and binds. By default every Gateway shares `options.gatewayAddresses`
 * (and so shares ports: listeners of several Gateways on one port are served together). With
 * `loopbackAddressPerGateway` (a gateway serving on loopback), Gateways stay independent as the spec intends:
 * the first Gateway (by `namespace/name`) to use a port keeps the shared address, and a Gateway that would share a
 * port with it gets its own 127.x.y.z, derived from a hash of `namespace/name` so it stays the same across
 * translations; collisions move to the next free address in key order.
 */
export function assignGatewayAddresses(
  gateways: readonly {
    readonly key: string;
    readonly ports: readonly number[];
    /** Usable addresses from spec.addresses (gateway-static-addresses.ts); empty: we choose. */
    readonly requested?: readonly string[];
  }[],
  options: TranslateOptions,
): ReadonlyMap<string, { readonly status: readonly string[]; readonly bind: string | undefined }> {
  const result = new Map<string, { status: readonly string[]; bind: string | undefined }>();
  const shared = { status: options.gatewayAddresses, bind: undefined };
  const chosen = gateways.filter((g) => (g.requested?.length ?? 0) === 0);
  for (const { key, requested } of gateways) {
    if (requested === undefined || requested.length === 0) continue;
    // A static address is bound only when Gateways get addresses of their own; else the proxy's wildcard serves it.
    const first = requested[0] as string;
    result.set(key, { status: [first], bind: options.loopbackAddressPerGateway ? first : undefined });
  }
  if (!options.loopbackAddressPerGateway) {
    for (const { key } of chosen) result.set(key, shared);
    return result;
  }
  const sharedPorts = new Set<number>();
  const taken = new Set<number>();
  for (const { key, ports } of [...chosen].sort((a, b) => compareStrings(a.key, b.key))) {
    if (!ports.some((port) => sharedPorts.has(port))) {
      for (const port of ports) sharedPorts.add(port);
      result.set(key, shared);
      continue;
    }
    let n = fnv1a(key) & 0xffffff;
    while (!usable(n) || taken.has(n)) n = (n + 1) & 0xffffff;
    taken.add(n);
    const address = `127.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
    result.set(key, { status: [address], bind: address });
  }
  return result;
}

/** Not 127.0.0.1 (the usual shared address) nor a .0/.255 host part. */
function usable(n: number): boolean {
  const last = n & 255;
  return n !== 1 && last !== 0 && last !== 255;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
