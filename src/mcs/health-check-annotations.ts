import type { HealthCheckConfig } from '../ir/route-table.ts';
import type { McsWarning } from './warnings.ts';

/**
 * Active health check settings per Service or ServiceImport, as annotations (issue 10). Annotations, not a
 * policy CRD yet: Gateway API has no health check policy (GEP-2648 BackendLBPolicy covers session persistence
 * only, and BackendTLSPolicy TLS), and a CRD of our own would need installing before a user can try it; an
 * annotation travels with the object it describes and can become a policy's field later unchanged.
 *
 * Without annotations every endpoint gets the default TCP connect probe. Bad values are reported (log line,
 * `clusterset_gateway_config_warnings`, and `healthCheck.problems` in /config_dump) and fall back to the
 * defaults; they never stop routing.
 */
export const HEALTH_CHECK_ANNOTATIONS = {
  /** `tcp` (default), `http` (implied by a path), or `off` (no active checks for this backend). */
  mode: 'clusterset-gateway.io/health-check',
  /** HTTP probe path, starting with `/`; setting it turns the HTTP probe on. */
  path: 'clusterset-gateway.io/health-check-path',
  /** Expected status: `200`, or a range `200-399` (default). */
  status: 'clusterset-gateway.io/health-check-status',
  /** Host header of the HTTP probe; default the endpoint address. */
  host: 'clusterset-gateway.io/health-check-host',
  /** Interval and timeout as Go-style durations (`500ms`, `2s`, `1m`); defaults from the CLI flags. */
  interval: 'clusterset-gateway.io/health-check-interval',
  timeout: 'clusterset-gateway.io/health-check-timeout',
} as const;

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m)$/;
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000 } as const;
const HOST = /^[A-Za-z0-9.:[\]-]{1,253}$/;

/** The settings the annotations of `owner` ask for, or undefined for the plain default TCP probe. */
export function parseHealthCheckAnnotations(
  annotations: Readonly<Record<string, string>> | undefined,
  owner: string,
  warnings: McsWarning[],
): HealthCheckConfig | undefined {
  if (annotations === undefined) return undefined;
  const a = HEALTH_CHECK_ANNOTATIONS;
  const problems: string[] = [];
  const bad = (name: string, value: string, why: string) =>
    problems.push(`${owner}: annotation ${name}=${JSON.stringify(value)} ${why}; using the default`);
  const config: { -readonly [K in keyof HealthCheckConfig]: HealthCheckConfig[K] } = {};
  let touched = false;

  const mode = annotations[a.mode];
  if (mode !== undefined) {
    touched = true;
    if (mode === 'off') config.disabled = true;
    else if (mode === 'http') config.kind = 'http';
    else if (mode !== 'tcp') bad(a.mode, mode, 'is not tcp, http or off');
  }
  const path = annotations[a.path];
  if (path !== undefined) {
    touched = true;
    if (path.startsWith('/') && !/[\s#]/.test(path) && path.length <= 1024) {
      config.kind = 'http';
      config.path = path;
    } else {
      bad(a.path, path, 'must start with / and hold no spaces or #');
    }
  }
  if (config.kind === 'http' && config.path === undefined) config.path = '/';
  const status = annotations[a.status];
  if (status !== undefined) {
    touched = true;
    const range = parseStatusRange(status);
    if (range === undefined)
      bad(a.status, status, 'is not a status (200) or a range (200-399) within 100-599');
    else [config.statusMin, config.statusMax] = range;
  }
  const host = annotations[a.host];
  if (host !== undefined) {
    touched = true;
    if (HOST.test(host)) config.host = host;
    else bad(a.host, host, 'is not a host name');
  }
  for (const field of ['interval', 'timeout'] as const) {
    const text = annotations[a[field]];
    if (text === undefined) continue;
    touched = true;
    const ms = parseDurationMs(text);
    if (ms === undefined || ms < 100 || ms > 3_600_000)
      bad(a[field], text, 'is not a duration from 100ms to 1h');
    else if (field === 'interval') config.intervalMs = ms;
    else config.timeoutMs = ms;
  }
  if (!touched) return undefined;
  for (const message of problems) warnings.push({ code: 'InvalidHealthCheckAnnotation', message });
  if (problems.length > 0) config.problems = problems;
  return config;
}

export function parseDurationMs(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (match === null) return undefined;
  return Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
}

function parseStatusRange(text: string): [number, number] | undefined {
  const match = /^(\d{3})(?:-(\d{3}))?$/.exec(text.trim());
  if (match === null) return undefined;
  const min = Number(match[1]);
  const max = match[2] === undefined ? min : Number(match[2]);
  return min >= 100 && max <= 599 && min <= max ? [min, max] : undefined;
}
