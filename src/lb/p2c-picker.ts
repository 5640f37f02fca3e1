import type { PeakEwmaOptions, RandomSource } from './options.ts';
import { peakEwmaLoad } from './peak-ewma.ts';
import type { TierEndpoints, TierPicker } from './tier-picker.ts';
import { WeightedSampler } from './weighted-sampler.ts';

/** Draws before falling back to a scan when candidates keep landing in `tried`. */
const DRAWS = 8;

/**
 * Power of two choices over peak-EWMA load (linkerd2-proxy, Finagle): draw two distinct candidates (by weight)
 * and take the one with the lower latency × (outstanding + 1). Loads within the tie band (a percentage of the
 * larger plus a margin; wider when both are idle, see PeakEwmaOptions.idleTieRatio) are a tie, broken at
 * random by weight: at one request at a time both loads are just latency noise, and a strict compare would
 * send nearly everything to whichever endpoint looked faster first. An idle loser's estimate fades a little
 * with each comparison it loses (PeakEwmaOptions.idleLossDecay): with two candidates P2C compares the same
 * pair every time, and a penalty only time would lift kept the loser out for seconds. O(1) per pick, no
 * allocation.
 */
export class P2cPeakEwmaPicker implements TierPicker {
  #tier: TierEndpoints;
  #random: RandomSource;
  #decayTimeMs: number;
  #tieRatio: number;
  #tieMarginMs: number;
  #idleTieRatio: number;
  #idleTieMarginMs: number;
  #idleLossKeep: number;
  #sampler: WeightedSampler;

  constructor(tier: TierEndpoints, random: RandomSource, peakEwma: PeakEwmaOptions) {
    this.#tier = tier;
    this.#random = random;
    this.#decayTimeMs = peakEwma.decayTimeMs;
    this.#tieRatio = peakEwma.tieTolerancePercent / 100;
    this.#tieMarginMs = peakEwma.tieMarginMs;
    this.#idleTieRatio = peakEwma.idleTieRatio;
    this.#idleTieMarginMs = peakEwma.idleTieMarginMs;
    this.#idleLossKeep = 1 - peakEwma.idleLossDecay;
    this.#sampler = new WeightedSampler(tier.states.length);
  }

  setCandidates(positions: Int32Array, count: number): void {
    this.#sampler.reset(positions, count, this.#tier.weights);
  }

  pick(tried: ReadonlySet<string> | undefined, nowMs: number): number {
    const count = this.#sampler.count;
    if (count === 0) return -1;
    const first = this.#draw(tried, -1);
    if (first < 0 || count === 1) return first;
    const second = this.#draw(tried, first);
    if (second < 0) return first;
    const { states, seed, weights } = this.#tier;
    const a = peakEwmaLoad(states[first]!, nowMs, this.#decayTimeMs, seed);
    const b = peakEwmaLoad(states[second]!, nowMs, this.#decayTimeMs, seed);
    const low = Math.min(a, b);
    const high = Math.max(a, b);
    const idle = states[first]!.outstanding === 0 && states[second]!.outstanding === 0;
    const tie = idle
      ? high <= low * this.#idleTieRatio + this.#idleTieMarginMs
      : high - low <= high * this.#tieRatio + this.#tieMarginMs;
    if (tie) {
      const wa = weights[first]!;
      return this.#random() * (wa + weights[second]!) < wa ? first : second;
    }
    // The loser's penalty fades with the requests that pass it by while no answer of its own is coming.
    const passed = states[b < a ? first : second]!;
    if (passed.outstanding === 0 && passed.observed) passed.rttMs *= this.#idleLossKeep;
    return b < a ? second : first;
  }

  /** A candidate not in `tried` and not `other`, or -1. */
  #draw(tried: ReadonlySet<string> | undefined, other: number): number {
    const states = this.#tier.states;
    const count = this.#sampler.count;
    // Draws follow the weights; the scan below does not, so it is only the fallback. One candidate needs one.
    const draws = count === 1 ? 1 : DRAWS;
    for (let i = 0; i < draws; i++) {
      const p = this.#sampler.sample(this.#random);
      if (p !== other && (tried === undefined || !tried.has(states[p]!.key))) return p;
    }
    // Rare with many candidates: most of them excluded. Scan from a random column so survivors share the load.
    const start = Math.floor(this.#random() * count);
    for (let i = 0; i < count; i++) {
      const p = this.#sampler.member((start + i) % count);
      if (p !== other && (tried === undefined || !tried.has(states[p]!.key))) return p;
    }
    return -1;
  }
}
