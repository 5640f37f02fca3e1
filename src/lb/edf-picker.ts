import type { RandomSource } from './options.ts';
import type { TierEndpoints, TierPicker } from './tier-picker.ts';

/**
 * Weighted round-robin as earliest-deadline-first (Envoy's EDF scheduler): a candidate picked k times is next
 * due at (k + 1) / weight; the earliest is picked, ties go to whoever was scheduled first. Weights 3:1 give
 * A A B A repeating. A binary heap makes a pick O(log n). Deadlines are compared by cross-multiplying
 * ((k_a + 1) × w_b vs (k_b + 1) × w_a), exact for integer weights, so long runs do not drift.
 * The schedule restarts whenever the candidate set changes, advanced by a random number of picks (0 to
 * candidates − 1, as Envoy's EDF load balancer does on refresh): otherwise every rebuild (a config change, a
 * health change) would start in slot order and give the first endpoints a burst.
 */
export class EdfPicker implements TierPicker {
  #tier: TierEndpoints;
  /** Heap of slots; a slot holds one candidate's position, pick count and scheduling order. */
  #heap: Int32Array;
  #position: Int32Array;
  #picks: Float64Array;
  #order: Float64Array;
  #size = 0;
  #nextOrder = 0;
  /** Slots popped while skipping `tried`, pushed back before returning. */
  #skipped: Int32Array;

  #random: RandomSource;

  constructor(tier: TierEndpoints, random: RandomSource) {
    this.#tier = tier;
    this.#random = random;
    const n = tier.states.length;
    this.#heap = new Int32Array(n);
    this.#position = new Int32Array(n);
    this.#picks = new Float64Array(n);
    this.#order = new Float64Array(n);
    this.#skipped = new Int32Array(n);
  }

  setCandidates(positions: Int32Array, count: number): void {
    for (let slot = 0; slot < count; slot++) {
      this.#position[slot] = positions[slot]!;
      this.#picks[slot] = 0;
      this.#order[slot] = slot;
      this.#heap[slot] = slot;
    }
    this.#size = count;
    this.#nextOrder = count;
    for (let i = (count >> 1) - 1; i >= 0; i--) this.#siftDown(i);
    const skip = Math.floor(this.#random() * count);
    for (let i = 0; i < skip; i++) this.pick(undefined, 0);
  }

  pick(tried: ReadonlySet<string> | undefined, _nowMs: number): number {
    const states = this.#tier.states;
    let skipped = 0;
    let chosen = -1;
    while (this.#size > 0) {
      const slot = this.#heap[0]!;
      const position = this.#position[slot]!;
      if (tried?.has(states[position]!.key)) {
        this.#skipped[skipped++] = this.#popTop();
        continue;
      }
      this.#picks[slot]!++;
      this.#order[slot] = this.#nextOrder++;
      this.#siftDown(0);
      chosen = position;
      break;
    }
    while (skipped > 0) this.#push(this.#skipped[--skipped]!);
    return chosen;
  }

  /** Whether slot a is due before slot b. */
  #before(a: number, b: number): boolean {
    const weights = this.#tier.weights;
    const da = (this.#picks[a]! + 1) * weights[this.#position[b]!]!;
    const db = (this.#picks[b]! + 1) * weights[this.#position[a]!]!;
    return da < db || (da === db && this.#order[a]! < this.#order[b]!);
  }

  #popTop(): number {
    const top = this.#heap[0]!;
    this.#size--;
    if (this.#size > 0) {
      this.#heap[0] = this.#heap[this.#size]!;
      this.#siftDown(0);
    }
    return top;
  }

  #push(slot: number): void {
    let i = this.#size++;
    const heap = this.#heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#before(slot, heap[parent]!)) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = slot;
  }

  #siftDown(start: number): void {
    const heap = this.#heap;
    const size = this.#size;
    const slot = heap[start]!;
    let i = start;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      if (child + 1 < size && this.#before(heap[child + 1]!, heap[child]!)) child++;
      if (!this.#before(heap[child]!, slot)) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = slot;
  }
}
