import type { AdminRoute } from '../admin/admin-server.ts';
import type { FleetReport } from '../fleet/fleet-report.ts';
import type { LocalIdentity } from '../gateway/options.ts';
import type { TranslationResult } from '../gateway/translate.ts';
import type { Source } from '../snapshot/source.ts';

/** One source of objects and everything that comes with it, whichever of file, demo or Kubernetes it is. */
export interface SourceSetup {
  readonly source: Source;
  /** Flags and, in the demo, the simulated gateway's place; ClusterProperty fills what is missing. */
  readonly identity: LocalIdentity;
  serviceImportKinds(): readonly { readonly group: string; readonly kind: string }[];
  /** Reasons the source is not ready (empty when it is). */
  notReady(): readonly string[];
  /** Problems in the input, for /config_dump. */
  problems(): readonly string[];
  /** After a table is applied: write its statuses where there is somewhere to write them. */
  onApplied(result: TranslationResult): Promise<void>;
  readonly adminRoutes: ReadonlyMap<string, AdminRoute>;
  /** Fleet mode only: members, derived imports and export conditions for /config_dump. */
  fleet?(): FleetReport;
  /** Printed once the gateway serves (the demo's curl lines). */
  readonly banner?: string;
  close(): Promise<void>;
}
