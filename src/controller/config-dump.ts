import type { TranslationResult } from '../gateway/translate.ts';
import { statusKey } from '../ir/status.ts';

export interface ConfigDumpInput {
  readonly result: TranslationResult | undefined;
  readonly balancers: unknown;
  readonly problems: readonly string[];
}

/**
 * The /config_dump document: the routing table, every status keyed by `Kind/namespace/name` exactly as it
 * would be written to the API server (with the generation it was computed from), balancer health, and
 * problems found in the input.
 */
export function buildConfigDump({ result, balancers, problems }: ConfigDumpInput): unknown {
  const statuses: Record<string, unknown> = {};
  for (const update of result?.statuses ?? []) {
    statuses[statusKey(update)] = { metadata: { generation: update.generation }, status: update.status };
  }
  const all = [...problems, ...(result?.problems ?? [])];
  return { statuses, routeTable: result?.table ?? null, balancers: balancers ?? null, problems: all };
}
