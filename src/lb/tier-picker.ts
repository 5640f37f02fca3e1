import type { EndpointState } from './endpoint-state.ts';
import type { LatencySeed } from './peak-ewma.ts';

/** One tier's endpoints as pickers see them: states and weights by position. */
export interface TierEndpoints {
  readonly states: readonly EndpointState[];
  /** Weight by position; positions with weight 0 are never candidates. */
  readonly weights: Float64Array;
  /** The backend's typical latency, the estimate of endpoints not observed yet. */
  readonly seed: LatencySeed;
}

/**
 * Chooses among one tier's candidates. Built once per endpoint-set change; `setCandidates` is called when
 * health changes which endpoints may be chosen (healthy ones, or all of them in panic mode). `pick` must not
 * allocate and must cost O(1) or O(log n) per call, plus a little per key in `tried` (a handful of retries).
 */
export interface TierPicker {
  setCandidates(positions: Int32Array, count: number): void;
  /** A candidate position whose key is not in `tried`, or -1 when every candidate was tried. */
  pick(tried: ReadonlySet<string> | undefined, nowMs: number): number;
}
