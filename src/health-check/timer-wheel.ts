/**
 * A hashed timing wheel (Varghese & Lauck; Netty's HashedWheelTimer): one slot per tick, an item lands in
 * the slot of its due tick modulo the wheel size and fires when the cursor passes that slot on the right
 * round. Scheduling is O(1), each tick touches one slot, and there is one timer for everything instead of one
 * per item. Pure: the caller drives `advance(nowMs)` from a single interval timer (or a fake clock).
 */
export class TimerWheel<T> {
  readonly #tickMs: number;
  readonly #mask: number;
  readonly #slots: { item: T; dueTick: number }[][];
  #cursorTick: number;
  #size = 0;

  /** `slots` is rounded up to a power of two. */
  constructor(tickMs: number, slots: number, nowMs: number) {
    let size = 1;
    while (size < slots) size <<= 1;
    this.#tickMs = tickMs;
    this.#mask = size - 1;
    this.#slots = Array.from({ length: size }, () => []);
    this.#cursorTick = Math.floor(nowMs / tickMs);
  }

  get size(): number {
    return this.#size;
  }

  /** Fires `item` at the first `advance` at or after `dueMs` (never in the current tick: the next at earliest). */
  schedule(item: T, dueMs: number): void {
    const dueTick = Math.max(this.#cursorTick + 1, Math.floor(dueMs / this.#tickMs));
    this.#slots[dueTick & this.#mask]!.push({ item, dueTick });
    this.#size++;
  }

  /** Fires everything due up to `nowMs`, in tick order. `fire` may schedule again. */
  advance(nowMs: number, fire: (item: T) => void): void {
    const target = Math.floor(nowMs / this.#tickMs);
    // After a long stall (a suspended laptop) one lap of the wheel covers every slot once.
    const laps = Math.min(target - this.#cursorTick, this.#slots.length);
    for (let i = 0; i < laps; i++) {
      const tick = target - laps + i + 1;
      const slot = this.#slots[tick & this.#mask]!;
      if (slot.length === 0) continue;
      const keep: { item: T; dueTick: number }[] = [];
      const due: T[] = [];
      for (const entry of slot) {
        // Same slot, later round: stays.
        if (entry.dueTick <= target) due.push(entry.item);
        else keep.push(entry);
      }
      this.#slots[tick & this.#mask] = keep;
      this.#size -= due.length;
      this.#cursorTick = tick;
      for (const item of due) fire(item);
    }
    this.#cursorTick = Math.max(this.#cursorTick, target);
  }
}
