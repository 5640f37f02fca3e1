import type { HeaderOps, HttpFilter, PathModifier } from '../ir/http-filters.ts';
import type { HTTPHeaderFilter, HTTPPathModifier, HTTPRouteFilter } from '../snapshot/resources.ts';
import { resolveBackendRef } from './backend-refs.ts';
import type { Problem } from './conditions.ts';
import type { RouteContext } from './route-context.ts';

export type FilterResult =
  | {
      readonly ok: true;
      readonly filters: readonly HttpFilter[];
      /**
       * A filter we cannot apply and must not skip (HTTPRouteFilter.extensionRef: "requests that would have been
       * processed by that filter MUST receive a HTTP error response"): the rule answers 500.
       */
      readonly failClosed: boolean;
    }
  | ({ readonly ok: false } & Problem<'UnsupportedValue'>);

const REDIRECT_CODES = new Set([301, 302, 303, 307, 308]);

/**
 * HTTPRouteFilter list to IR filters, in order. Unknown types and values the CRD would have rejected make the
 * rule invalid (UnsupportedValue); an unresolvable mirror backend is dropped and reported as ResolvedRefs.
 */
export function translateFilters(
  filters: readonly HTTPRouteFilter[],
  field: string,
  context: RouteContext,
): FilterResult {
  const out: HttpFilter[] = [];
  let failClosed = false;
  for (const [i, filter] of filters.entries()) {
    const at = `${field}[${i}]`;
    switch (filter.type) {
      case 'RequestHeaderModifier': {
        const problem = headerFilterProblem(filter.requestHeaderModifier, `${at}.requestHeaderModifier`);
        if (problem !== undefined) return unsupported(problem);
        out.push({ kind: 'RequestHeaderModifier', ...headerOps(filter.requestHeaderModifier) });
        break;
      }
      case 'ResponseHeaderModifier': {
        const problem = headerFilterProblem(filter.responseHeaderModifier, `${at}.responseHeaderModifier`);
        if (problem !== undefined) return unsupported(problem);
        out.push({ kind: 'ResponseHeaderModifier', ...headerOps(filter.responseHeaderModifier) });
        break;
      }
      case 'RequestRedirect': {
        const redirect = filter.requestRedirect ?? {};
        const statusCode = redirect.statusCode ?? 302;
        if (!REDIRECT_CODES.has(statusCode)) {
          return unsupported(
            `${at}.requestRedirect.statusCode ${statusCode} is not one of 301, 302, 303, 307, 308`,
          );
        }
        const scheme = redirect.scheme?.toLowerCase();
        if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') {
          return unsupported(`${at}.requestRedirect.scheme ${redirect.scheme} is not http or https`);
        }
        out.push({
          kind: 'RequestRedirect',
          statusCode: statusCode as 301 | 302 | 303 | 307 | 308,
          ...(scheme !== undefined ? { scheme } : {}),
          ...(redirect.hostname !== undefined ? { hostname: redirect.hostname } : {}),
          ...(redirect.port !== undefined ? { port: redirect.port } : {}),
          ...(redirect.path !== undefined ? { path: pathModifier(redirect.path) } : {}),
        });
        break;
      }
      case 'URLRewrite': {
        const rewrite = filter.urlRewrite ?? {};
        out.push({
          kind: 'URLRewrite',
          ...(rewrite.hostname !== undefined ? { hostname: rewrite.hostname } : {}),
          ...(rewrite.path !== undefined ? { path: pathModifier(rewrite.path) } : {}),
        });
        break;
      }
      case 'RequestMirror': {
        const mirror = filter.requestMirror;
        if (!mirror) return unsupported(`${at}.requestMirror is required for type RequestMirror`);
        const resolved = resolveBackendRef(mirror.backendRef, `${at}.requestMirror.backendRef`, context);
        if (!resolved.ok) {
          context.refProblems.push({ reason: resolved.reason, message: resolved.message });
          break;
        }
        context.backends.set(resolved.backend.id, resolved.backend);
        context.warnings.push(...resolved.warnings);
        out.push({ kind: 'RequestMirror', backendId: resolved.backend.id, percent: mirrorPercent(mirror) });
        break;
      }
      case 'CORS': {
        const cors = filter.cors ?? {};
        out.push({
          kind: 'CORS',
          allowOrigins: cors.allowOrigins ?? [],
          allowCredentials: cors.allowCredentials ?? false,
          allowMethods: cors.allowMethods ?? [],
          allowHeaders: cors.allowHeaders ?? [],
          exposeHeaders: cors.exposeHeaders ?? [],
          // HTTPCORSFilter.maxAge defaults to 5 seconds.
          maxAgeSeconds: cors.maxAge ?? 5,
        });
        break;
      }
      case 'ExtensionRef': {
        const ref = filter.extensionRef;
        context.refProblems.push({
          reason: 'InvalidKind',
          message: `${at}.extensionRef ${ref?.group ?? ''}/${ref?.kind ?? ''} ${ref?.name ?? ''}: no extension filters are supported`,
        });
        failClosed = true;
        break;
      }
      default:
        return unsupported(`${at}.type ${filter.type} is not supported`);
    }
  }
  return { ok: true, filters: out, failClosed };
}

function unsupported(message: string): FilterResult {
  return { ok: false, reason: 'UnsupportedValue', message };
}

/** RFC 9110 §5.1 field-name: a token. */
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** RFC 9110 §5.5 field-value: visible characters, obs-text, spaces and tabs; never CR, LF or NUL. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * A header name or value that HTTP cannot carry (CRLF would split the request, a bad name is refused by the
 * upstream client) makes the rule invalid at translation, so nothing malformed reaches the wire.
 */
function headerFilterProblem(filter: HTTPHeaderFilter | undefined, at: string): string | undefined {
  for (const list of ['set', 'add'] as const) {
    for (const [i, h] of (filter?.[list] ?? []).entries()) {
      if (!FIELD_NAME.test(h.name)) {
        return `${at}.${list}[${i}].name ${JSON.stringify(h.name)} is not a valid HTTP header name (RFC 9110 token)`;
      }
      if (!FIELD_VALUE.test(h.value)) {
        return `${at}.${list}[${i}].value of ${h.name} has characters HTTP forbids in a header value (CR, LF, NUL or other controls)`;
      }
    }
  }
  for (const [i, name] of (filter?.remove ?? []).entries()) {
    if (!FIELD_NAME.test(name)) {
      return `${at}.remove[${i}] ${JSON.stringify(name)} is not a valid HTTP header name (RFC 9110 token)`;
    }
  }
  return undefined;
}

/** Header names are case-insensitive (RFC 9110); the IR carries them lower-cased. */
function headerOps(filter: HTTPHeaderFilter | undefined): HeaderOps {
  return {
    set: (filter?.set ?? []).map((h) => ({ name: h.name.toLowerCase(), value: h.value })),
    add: (filter?.add ?? []).map((h) => ({ name: h.name.toLowerCase(), value: h.value })),
    remove: (filter?.remove ?? []).map((name) => name.toLowerCase()),
  };
}

function pathModifier(path: HTTPPathModifier): PathModifier {
  return path.type === 'ReplaceFullPath'
    ? { kind: 'ReplaceFullPath', value: path.replaceFullPath ?? '/' }
    : { kind: 'ReplacePrefixMatch', value: path.replacePrefixMatch ?? '/' };
}

/** HTTPRequestMirrorFilter: `percent`, or `fraction` (denominator defaults to 100); neither means 100%. */
function mirrorPercent(mirror: NonNullable<HTTPRouteFilter['requestMirror']>): number {
  if (mirror.percent !== undefined) return mirror.percent;
  if (mirror.fraction !== undefined) {
    const denominator = mirror.fraction.denominator ?? 100;
    return denominator > 0 ? (mirror.fraction.numerator / denominator) * 100 : 0;
  }
  return 100;
}
