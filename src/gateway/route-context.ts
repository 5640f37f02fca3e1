import type { BackendCluster } from '../ir/route-table.ts';
import type { McsWarning } from '../mcs/warnings.ts';
import type { BackendRefContext, ResolvedRefsReason } from './backend-refs.ts';
import type { Problem } from './conditions.ts';

/** What translating one HTTPRoute collects beside its rules: backends, unresolved references, warnings. */
export interface RouteContext extends BackendRefContext {
  /** Every valid BackendCluster referenced, by id (merged into RouteTable.backends). */
  readonly backends: Map<string, BackendCluster>;
  /** Unresolved references, in field order; the first one names the route's ResolvedRefs=False reason. */
  readonly refProblems: Problem<ResolvedRefsReason>[];
  readonly warnings: McsWarning[];
}
