import type { HttpFilter, PathModifier } from '../../ir/http-filters.ts';

type RedirectFilter = Extract<HttpFilter, { kind: 'RequestRedirect' }>;

export interface CompiledRedirect {
  readonly statusCode: number;
  location(input: RedirectInput): string;
}

export interface RedirectInput {
  /** Scheme the client used to reach the listener. */
  readonly scheme: 'http' | 'https';
  /** Request host without port, lower-case. */
  readonly host: string;
  readonly path: string;
  /** Query string with its leading `?`, or ''. */
  readonly query: string;
  /** The PathPrefix of the matched entry (for ReplacePrefixMatch). */
  readonly matchedPrefix: string | undefined;
  /** The Gateway listener's own port (before any listener port offset). */
  readonly listenerPort: number;
}

const DEFAULT_PORT = { http: 80, https: 443 } as const;

/**
 * Builds the Location of a RequestRedirect (HTTPRequestRedirectFilter). Port rules from the spec: without
 * `port`, a redirect that sets `scheme` uses that scheme's well-known port, otherwise the Gateway listener's
 * port; the port is left out when it is the scheme's default (http 80, https 443).
 */
export function compileRedirect(filter: RedirectFilter): CompiledRedirect {
  const { scheme, hostname, path, port, statusCode } = filter;
  return {
    statusCode,
    location(input) {
      const outScheme = scheme ?? input.scheme;
      const outPort = port ?? (scheme !== undefined ? DEFAULT_PORT[scheme] : input.listenerPort);
      const outHost = hostname ?? input.host;
      const portPart = outPort === DEFAULT_PORT[outScheme] ? '' : `:${outPort}`;
      const outPath = path === undefined ? input.path : rewritePath(path, input.path, input.matchedPrefix);
      return `${outScheme}://${outHost}${portPart}${outPath}${input.query}`;
    },
  };
}

/**
 * Path modification shared by RequestRedirect and URLRewrite. ReplacePrefixMatch replaces the matched prefix
 * element-wise: prefix `/foo` with replacement `/bar` turns `/foo/x` into `/bar/x` and `/foo` into `/bar`;
 * replacement `/` turns `/foo/x` into `/x` (conformance HTTPRouteRewritePath).
 */
export function rewritePath(mod: PathModifier, path: string, matchedPrefix: string | undefined): string {
  if (mod.kind === 'ReplaceFullPath') return mod.value;
  const prefix = trimTrailingSlash(matchedPrefix ?? '');
  const rest = path.slice(prefix.length);
  const replacement = trimTrailingSlash(mod.value);
  if (rest === '' || rest === '/') {
    const out = replacement + rest;
    return out === '' ? '/' : out;
  }
  return replacement + rest;
}

function trimTrailingSlash(value: string): string {
  let end = value.length;
  while (end > 0 && value.charCodeAt(end - 1) === 47) end--;
  return value.slice(0, end);
}
