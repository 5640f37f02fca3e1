import type { FleetReport } from '../fleet/fleet-report.ts';
import type { RouteTable } from '../ir/route-table.ts';
import { type StatusUpdate, statusKey } from '../ir/status.ts';
import type { NetworksReport } from './network-report.ts';

/**
 * What the dump shows of one translation; gateway's TranslationResult is one. Typed by the IR so that the admin
 * server reads what translation produced without depending on the translator.
 */
export interface DumpedTranslation {
  readonly table: RouteTable;
  readonly statuses: readonly StatusUpdate[];
  readonly problems?: readonly string[];
  /** What translation could not act on or degraded around; each is a problem line starting `warning: `. */
  readonly warnings?: readonly { readonly message: string }[];
}

export interface ConfigDumpInput {
  readonly result: DumpedTranslation | undefined;
  readonly balancers: unknown;
  readonly problems: readonly string[];
  /** Fleet mode: every member, the derived ServiceImports and their conflicts, each export's conditions. */
  readonly fleet?: FleetReport | undefined;
  /** Multi-network: this gateway's network, every network's clusters and gateways, its identity and sessions. */
  readonly networks?: NetworksReport | undefined;
}

/**
 * The /config_dump document: the routing table, every status keyed by `Kind/namespace/name` exactly as it
 * would be written to the API server (with the generation it was computed from), balancer health, and
 * problems found in the input (errors, then warnings: objects the gateway cannot act on, and why).
 */
export function buildConfigDump({ result, balancers, problems, fleet, networks }: ConfigDumpInput): unknown {
  const statuses: Record<string, unknown> = {};
  for (const update of result?.statuses ?? []) {
    statuses[statusKey(update)] = { metadata: { generation: update.generation }, status: update.status };
  }
  return redactSecrets({
    statuses,
    routeTable: result?.table ?? null,
    balancers: balancers ?? null,
    problems: [
      ...problems,
      ...(result?.problems ?? []),
      // The same backend warning comes from every route that uses the backend: listed once.
      ...new Set((result?.warnings ?? []).map((w) => `warning: ${w.message}`)),
    ],
    ...(fleet ? { fleet } : {}),
    ...(networks ? { networks } : {}),
  });
}

/** Fields whose values come from Secret data, whatever object holds them. */
const SECRET_FIELDS = new Set(['keyPem', 'certPem', 'caPem', 'privateKey', 'password']);

/**
 * Replaces every value that came from a Secret (TLS keys and certificates, any PEM block, a Secret's `data`
 * and `stringData`) by `<redacted, N bytes>`: the dump shows that the material is there and how big it is,
 * never the material.
 */
export function redactSecrets(value: unknown, key = ''): unknown {
  if (typeof value === 'string') {
    return SECRET_FIELDS.has(key) || value.includes('-----BEGIN') ? redacted(value) : value;
  }
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, key));
  if (typeof value !== 'object' || value === null) return value;
  const isSecret = (value as { kind?: unknown }).kind === 'Secret';
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (isSecret && (k === 'data' || k === 'stringData') && typeof v === 'object' && v !== null) {
      out[k] = Object.fromEntries(Object.entries(v).map(([name, data]) => [name, redacted(String(data))]));
    } else {
      out[k] = redactSecrets(v, k);
    }
  }
  return out;
}

function redacted(text: string): string {
  return `<redacted, ${Buffer.byteLength(text)} bytes>`;
}
