import type { CompiledCors } from './cors.ts';
import {
  applyHeaderMods,
  connectionListedNames,
  dropNames,
  type HeaderMod,
  HOP_BY_HOP,
} from './header-ops.ts';

/**
 * The response headers relayed to the client from an upstream's raw ones, in one pass: hop-by-hop headers and
 * the ones its Connection header lists are dropped (RFC 9110 §7.6.1), then the route's response header
 * modifiers run, then CORS headers are added for an allowed origin.
 */
export function relayedResponseHeaders(
  rawHeaders: readonly Buffer[],
  responseMods: readonly HeaderMod[],
  cors: CompiledCors | undefined,
  corsOrigin: string | undefined,
): string[] {
  let headers: string[] = [];
  let listed: string[] | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toString('latin1');
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower)) {
      if (lower === 'connection') {
        const extra = connectionListedNames(rawHeaders[i + 1]!.toString('latin1'));
        if (extra !== undefined) listed = listed === undefined ? extra : listed.concat(extra);
      }
      continue;
    }
    headers.push(name, rawHeaders[i + 1]!.toString('latin1'));
  }
  if (listed !== undefined) headers = dropNames(headers, listed);
  if (responseMods.length > 0) headers = applyHeaderMods(headers, responseMods);
  if (corsOrigin !== undefined && cors !== undefined) {
    for (const h of cors.responseHeaders(corsOrigin)) headers.push(h);
  }
  return headers;
}
