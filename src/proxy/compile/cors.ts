import type { HttpFilter } from '../../ir/http-filters.ts';

type CorsFilter = Extract<HttpFilter, { kind: 'CORS' }>;

export interface CompiledCors {
  /** The Access-Control-Allow-Origin value for this Origin, or undefined when the origin is not allowed. */
  allowOrigin(origin: string): string | undefined;
  /** Headers for a preflight answer (flat pairs), given the allowed origin value and the request's asks. */
  preflightHeaders(allowOrigin: string, requestMethod: string, requestHeaders: string | undefined): string[];
  /** Headers added to an actual (forwarded) response. */
  responseHeaders(allowOrigin: string): string[];
}

function compileOriginTest(pattern: string): (origin: string) => boolean {
  if (pattern === '*') return () => true;
  if (!pattern.includes('*')) {
    const lower = pattern.toLowerCase();
    return (origin) => origin.toLowerCase() === lower;
  }
  // `https://*.example.com`: the wildcard stands for one or more host labels (HTTPCORSFilter.allowOrigins).
  const escaped = pattern
    .toLowerCase()
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
    .join('[^/]+');
  const regex = new RegExp(`^${escaped}$`);
  return (origin) => regex.test(origin.toLowerCase());
}

/**
 * The CORS filter (GEP-1767). The gateway answers preflights itself and decorates actual responses. With
 * `allowCredentials`, wildcards are never sent literally: browsers reject `*` on credentialed requests, so the
 * request's own origin, method and headers are echoed instead.
 */
export function compileCors(filter: CorsFilter): CompiledCors {
  const tests = filter.allowOrigins.map(compileOriginTest);
  const anyOrigin = filter.allowOrigins.includes('*');
  const credentials = filter.allowCredentials;
  const anyMethod = filter.allowMethods.includes('*');
  const anyHeader = filter.allowHeaders.includes('*');
  const methods = filter.allowMethods.join(', ');
  const allowHeaders = filter.allowHeaders.join(', ');
  const expose = filter.exposeHeaders.join(', ');
  const maxAge = String(filter.maxAgeSeconds);
  return {
    allowOrigin(origin) {
      if (anyOrigin && !credentials) return '*';
      for (const test of tests) if (test(origin)) return origin;
      return undefined;
    },
    preflightHeaders(allowOrigin, requestMethod, requestHeaders) {
      const out = ['access-control-allow-origin', allowOrigin];
      if (allowOrigin !== '*') out.push('vary', 'Origin');
      if (credentials) out.push('access-control-allow-credentials', 'true');
      const outMethods = anyMethod ? (credentials ? requestMethod : '*') : methods;
      if (outMethods !== '') out.push('access-control-allow-methods', outMethods);
      const outHeaders = anyHeader ? (credentials ? (requestHeaders ?? '') : '*') : allowHeaders;
      if (outHeaders !== '') out.push('access-control-allow-headers', outHeaders);
      if (expose !== '') out.push('access-control-expose-headers', expose);
      out.push('access-control-max-age', maxAge);
      return out;
    },
    responseHeaders(allowOrigin) {
      const out = ['access-control-allow-origin', allowOrigin];
      if (allowOrigin !== '*') out.push('vary', 'Origin');
      if (credentials) out.push('access-control-allow-credentials', 'true');
      if (expose !== '') out.push('access-control-expose-headers', expose);
      return out;
    },
  };
}
