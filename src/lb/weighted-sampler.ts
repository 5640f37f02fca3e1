import type { RandomSource } from './options.ts';

/**
 * Draws a candidate with probability proportional to its weight in O(1), by Vose's alias method. Built once
 * per candidate-set change into preallocated typed arrays; a draw allocates nothing and uses one random
 * number (its integer part picks the column, its fraction flips the column's biased coin).
 */
export class WeightedSampler {
  #members: Int32Array;
  #alias: Int32Array;
  #threshold: Float64Array;
  #small: Int32Array;
  #large: Int32Array;
  #count = 0;
  #uniform = true;

  /** `capacity`: the most candidates it will ever hold. */
  constructor(capacity: number) {
    this.#members = new Int32Array(capacity);
    this.#alias = new Int32Array(capacity);
    this.#threshold = new Float64Array(capacity);
    this.#small = new Int32Array(capacity);
    this.#large = new Int32Array(capacity);
  }

  get count(): number {
    return this.#count;
  }

  /** The candidate at column `i` (for scans in column order). */
  member(i: number): number {
    return this.#members[i]!;
  }

  /** `positions[0..count)` are the candidates; `weights[position]` their weights (> 0). */
  reset(positions: Int32Array, count: number, weights: Float64Array): void {
    this.#count = count;
    let total = 0;
    let uniform = true;
    const first = count > 0 ? weights[positions[0]!]! : 0;
    for (let i = 0; i < count; i++) {
      const p = positions[i]!;
      this.#members[i] = p;
      const w = weights[p]!;
      total += w;
      if (w !== first) uniform = false;
    }
    this.#uniform = uniform;
    if (uniform || count === 0) return;

    // Vose: scale weights so the mean is 1, then pair each under-full column with an over-full one.
    let smalls = 0;
    let larges = 0;
    for (let i = 0; i < count; i++) {
      const scaled = (weights[positions[i]!]! * count) / total;
      this.#threshold[i] = scaled;
      if (scaled < 1) this.#small[smalls++] = i;
      else this.#large[larges++] = i;
    }
    while (smalls > 0 && larges > 0) {
      const s = this.#small[--smalls]!;
      const l = this.#large[larges - 1]!;
      this.#alias[s] = l;
      const rest = this.#threshold[l]! + this.#threshold[s]! - 1;
      this.#threshold[l] = rest;
      if (rest < 1) {
        larges--;
        this.#small[smalls++] = l;
      }
    }
    // Leftovers are full columns (up to rounding).
    while (larges > 0) this.#threshold[this.#large[--larges]!] = 1;
    while (smalls > 0) this.#threshold[this.#small[--smalls]!] = 1;
  }

  /** A candidate position, or -1 when there are none. */
  sample(random: RandomSource): number {
    const count = this.#count;
    if (count === 0) return -1;
    const u = random() * count;
    const column = Math.floor(u);
    if (this.#uniform) return this.#members[column]!;
    return u - column < this.#threshold[column]!
      ? this.#members[column]!
      : this.#members[this.#alias[column]!]!;
  }
}
