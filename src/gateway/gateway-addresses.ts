import type { TranslateOptions } from './options.ts';

/**
 * The addresses each Gateway reports and binds. By default every Gateway shares `options.gatewayAddresses`
 * (and so shares ports: listeners of several Gateways on one port are served together). With
 * `loopbackAddressPerGateway`, each Gateway gets its own 127.x.y.z, derived from a hash of `namespace/name` so
 * it stays the same across translations; collisions move to the next free address in key order.
 */
export function assignGatewayAddresses(
  gatewayKeys: readonly string[],
  options: TranslateOptions,
): ReadonlyMap<string, { readonly status: readonly string[]; readonly bind: string | undefined }> {
  const result = new Map<string, { status: readonly string[]; bind: string | undefined }>();
  if (!options.loopbackAddressPerGateway) {
    for (const key of gatewayKeys) result.set(key, { status: options.gatewayAddresses, bind: undefined });
    return result;
  }
  const taken = new Set<number>();
  for (const key of [...gatewayKeys].sort()) {
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
