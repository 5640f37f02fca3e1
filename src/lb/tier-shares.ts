/**
 * How traffic splits across locality tiers, after Envoy's priority levels
 * (envoyproxy.io: arch_overview/upstream/load_balancing/priority and panic_threshold). The rule, exactly:
 *
 * 1. A tier's healthy fraction is healthy endpoints / endpoints (counts, not weights; an empty tier is 0).
 * 2. Its health is min(1, healthy fraction × overprovisioning factor): with 1.4 a tier stays "fully healthy"
 *    down to ~71.4% healthy endpoints.
 * 3. Normalized total health is min(1, sum of tier healths).
 * 4. Nearest first, tier i receives min(what is left, health_i / normalized total). While the sum is ≥ 1 this
 *    spills exactly the missing health to farther tiers (tier 0 at 50% healthy keeps 70%, 30% spills); below 1
 *    (degraded) shares are scaled up so that they still add up to 1.
 * 5. Panic: only while normalized total health is < 1, a tier whose healthy fraction is below the panic
 *    threshold is in panic and picks among all its endpoints regardless of health. A threshold of 0 disables it.
 * 6. When no endpoint is healthy anywhere, the nearest non-empty tier takes all traffic in panic mode (Envoy
 *    sends everything to P=0); with the threshold at 0 nothing is chosen and the proxy answers 503.
 *
 * Unlike Envoy, fractions are kept (Envoy rounds to integer percents), and there is no "total panic" re-split
 * by host counts: when every tier panics, traffic still prefers near tiers by their health.
 */

export interface TierHealth {
  readonly healthy: number;
  readonly total: number;
}

export interface TierShares {
  /** Share of new requests per tier, 0..1, summing to 1 (or to 0 when nothing may be chosen). */
  readonly shares: number[];
  /** Per tier: pick among all endpoints regardless of health. */
  readonly panic: boolean[];
}

/** `tierFactors[i]` > 0 replaces the overprovisioning factor for tier i (a ClusterSelectionPolicy tier's own). */
export function computeTierShares(
  tiers: readonly TierHealth[],
  overprovisioningFactor: number,
  panicThresholdPercent: number,
  tierFactors?: readonly number[],
): TierShares {
  const shares = new Array<number>(tiers.length).fill(0);
  const panic = new Array<boolean>(tiers.length).fill(false);
  const fractions = tiers.map((t) => (t.total > 0 ? t.healthy / t.total : 0));
  const health = fractions.map((f, i) => {
    const own = tierFactors?.[i];
    return Math.min(1, f * (own !== undefined && own > 0 ? own : overprovisioningFactor));
  });
  const sum = health.reduce((a, b) => a + b, 0);
  const threshold = panicThresholdPercent / 100;

  if (sum === 0) {
    const nearest = tiers.findIndex((t) => t.total > 0);
    if (nearest >= 0 && threshold > 0) {
      shares[nearest] = 1;
      panic[nearest] = true;
    }
    return { shares, panic };
  }

  const normalized = Math.min(1, sum);
  let left = 1;
  for (let i = 0; i < tiers.length; i++) {
    const share = Math.min(left, health[i]! / normalized);
    shares[i] = share;
    left -= share;
    panic[i] = normalized < 1 && tiers[i]!.total > 0 && fractions[i]! < threshold;
  }
  return { shares, panic };
}
