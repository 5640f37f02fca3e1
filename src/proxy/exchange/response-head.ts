import type { CompiledCors } from '../compile/cors.ts';
import {
  applyHeaderMods,
  connectionListedNames,
  dropNames,
  type HeaderMod,
  HOP_BY_HOP,
} from '../compile/header-ops.ts';

/**
 * The response headers relayed to the client from an upstream's raw ones, in one pass: hop-by-hop headers and
 * the ones its Connection header lists are dropped (RFC 9110 §7.6.1), then the route's response header
 * modifiers run, then CORS headers are added for an allowed origin.
 */
export function relayedResponseHeaders(
  rawHeaders: readonly (Buffer | string)[],
  responseMods: readonly HeaderMod[],
  cors: CompiledCors | undefined,
  corsOrigin: string | undefined,
): string[] {
  let headers: string[] = [];
  let listed: string[] | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = latin1(rawHeaders[i]!);
    const lower = HOP_BY_HOP_LENGTHS[name.length] === true ? name.toLowerCase() : undefined;
    if (lower !== undefined && HOP_BY_HOP.has(lower)) {
      if (lower === 'connection') {
        const extra = connectionListedNames(latin1(rawHeaders[i + 1]!));
        if (extra !== undefined) listed = listed === undefined ? extra : listed.concat(extra);
      }
      continue;
    }
    headers.push(name, latin1(rawHeaders[i + 1]!));
  }
  if (listed !== undefined) headers = dropNames(headers, listed);
  if (responseMods.length > 0) headers = applyHeaderMods(headers, responseMods);
  if (corsOrigin !== undefined && cors !== undefined) {
    for (const h of cors.responseHeaders(corsOrigin)) headers.push(h);
  }
  return headers;
}

/**
 * By name length, whether a hop-by-hop name has it: most response headers (content-type, date, server, ...)
 * are relayed without being lower-cased or looked up.
 */
const HOP_BY_HOP_LENGTHS: readonly boolean[] = (() => {
  const lengths: boolean[] = [];
  for (const name of HOP_BY_HOP) lengths[name.length] = true;
  return Array.from(lengths, (has) => has === true);
})();

/** undici hands headers over as Buffers, this project's HTTP/1.1 client as strings (already latin1). */
function latin1(raw: Buffer | string): string {
  return typeof raw === 'string' ? raw : raw.toString('latin1');
}
