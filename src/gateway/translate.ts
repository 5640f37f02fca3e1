import type { RouteTable } from '../ir/route-table.ts';
import type { StatusUpdate } from '../ir/status.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import type { TranslateOptions } from './options.ts';

export interface TranslationResult {
  readonly table: RouteTable;
  /** One entry per GatewayClass, Gateway and HTTPRoute this controller owns or that refers to its Gateways. */
  readonly statuses: readonly StatusUpdate[];
}

/** Pure: no I/O, no clock, deterministic order (DESIGN.md §1). */
export function translate(_snapshot: Snapshot, _options: TranslateOptions): TranslationResult {
  throw new Error('not implemented yet');
}
