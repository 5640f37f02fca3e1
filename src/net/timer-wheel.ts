/**
 * A deadline armed on a wheel. One is allocated per owner (a connection, an exchange's timer kind) and re-armed
 * for its lifetime, so arming and cancelling allocate nothing.
 */
export class Deadline<T> {
  /** The wheel slot holding it; NOT_ARMED when it is not armed, FIRING while its tick is being fired. */
  slot = NOT_ARMED;
  index = 0;
  dueTick = 0;
  readonly target: T;
  readonly #expire: (target: T) => void;

  constructor(target: T, expire: (target: T) => void) {
    this.target = target;
    this.#expire = expire;
  }

  get armed(): boolean {
    return this.slot !== NOT_ARMED;
  }

  expire(): void {
    this.#expire(this.target);
  }
}

const NOT_ARMED = -1;
const FIRING = -2;

/**
 * A hashed timing wheel (Varghese & Lauck; Netty's HashedWheelTimer) for the request path's deadlines and the
 * health checks' probes: one slot per tick, a deadline lands in the slot of its due tick modulo the wheel size.
 * Arming and cancelling are O(1) without allocation; one interval timer serves every deadline instead of a Node
 * timer (and its list insertion) per request, socket or probe. A deadline fires at the first tick at or after it
 * is due, so never early and at most one tick late. Pure: the caller drives `advance(nowMs)` (from one interval
 * timer, `DeadlineClock`, or a fake clock).
 */
export class TimerWheel {
  readonly tickMs: number;
  readonly #mask: number;
  readonly #slots: Deadline<unknown>[][];
  #cursorTick: number;
  #size = 0;

  /** `slots` is rounded up to a power of two. */
  constructor(tickMs: number, slots: number, nowMs: number) {
    let size = 1;
    while (size < slots) size <<= 1;
    this.tickMs = tickMs;
    this.#mask = size - 1;
    this.#slots = Array.from({ length: size }, () => []);
    this.#cursorTick = Math.floor(nowMs / tickMs);
  }

  get size(): number {
    return this.#size;
  }

  /** The time of the last tick advanced to: a coarse clock that costs nothing to read. */
  get coarseNowMs(): number {
    return this.#cursorTick * this.tickMs;
  }

  /** Arms `deadline` to fire `delayMs` after `nowMs` (re-arming one that is armed moves it). */
  arm<T>(deadline: Deadline<T>, nowMs: number, delayMs: number): void {
    if (deadline.slot !== NOT_ARMED) this.cancel(deadline);
    const dueTick = Math.max(this.#cursorTick + 1, Math.ceil((nowMs + delayMs) / this.tickMs));
    const slot = dueTick & this.#mask;
    const entries = this.#slots[slot]!;
    deadline.slot = slot;
    deadline.index = entries.length;
    deadline.dueTick = dueTick;
    entries.push(deadline as Deadline<unknown>);
    this.#size++;
  }

  cancel<T>(deadline: Deadline<T>): void {
    const slot = deadline.slot;
    if (slot === NOT_ARMED) return;
    deadline.slot = NOT_ARMED;
    if (slot === FIRING) return;
    const entries = this.#slots[slot]!;
    const last = entries.pop()!;
    if (last !== deadline) {
      entries[deadline.index] = last;
      last.index = deadline.index;
    }
    this.#size--;
  }

  /** Fires every deadline due up to `nowMs`, in tick order. A deadline may re-arm itself or cancel others. */
  advance(nowMs: number): void {
    const target = Math.floor(nowMs / this.tickMs);
    // After a long stall (a suspended laptop) one lap of the wheel covers every slot once.
    const laps = Math.min(target - this.#cursorTick, this.#slots.length);
    for (let i = 0; i < laps; i++) {
      const tick = target - laps + i + 1;
      const slot = tick & this.#mask;
      const entries = this.#slots[slot]!;
      this.#cursorTick = tick;
      if (entries.length === 0) continue;
      const due: Deadline<unknown>[] = [];
      let kept = 0;
      for (const entry of entries) {
        if (entry.dueTick <= target) {
          entry.slot = FIRING;
          due.push(entry);
        } else {
          entry.index = kept;
          entries[kept++] = entry;
        }
      }
      entries.length = kept;
      this.#size -= due.length;
      for (const entry of due) {
        // Cancelled by an earlier one of this tick.
        if (entry.slot !== FIRING) continue;
        entry.slot = NOT_ARMED;
        entry.expire();
      }
    }
    this.#cursorTick = Math.max(this.#cursorTick, target);
  }
}

const TICK_MS = 10;
const SLOTS = 4096;
/**
 * Ticks the wheel may stand empty, with nothing armed, before its interval stops (1 s at 10 ms): one request at a time (a new connection
 * per request, a client that waits between requests) empties it between requests, and stopping and restarting the
 * interval each time costs more than the ticks it saves.
 */
const IDLE_TICKS = 100;

/**
 * A wheel advanced by one unref'd interval timer that runs while something is armed (and for `idleTicks` after it
 * empties), on the real clock (`performance.now()`).
 */
export class DeadlineClock {
  readonly wheel: TimerWheel;
  readonly #idleTicks: number;
  #interval: NodeJS.Timeout | undefined;
  /** Ticks in a row the wheel was empty at with nothing armed since. */
  #emptyTicks = 0;

  constructor(tickMs = TICK_MS, slots = SLOTS, idleTicks = IDLE_TICKS) {
    this.wheel = new TimerWheel(tickMs, slots, performance.now());
    this.#idleTicks = idleTicks;
  }

  /** A coarse clock (the last tick) for stamping activity on the hot path. */
  get coarseNowMs(): number {
    return this.wheel.coarseNowMs;
  }

  /** Whether the interval timer is running. */
  get running(): boolean {
    return this.#interval !== undefined;
  }

  arm<T>(deadline: Deadline<T>, delayMs: number): void {
    const nowMs = performance.now();
    this.#emptyTicks = 0;
    if (this.#interval === undefined) {
      // The wheel stood still while empty: its coarse clock catches up before anyone stamps with it.
      this.wheel.advance(nowMs);
      this.#interval = setInterval(advanceClock, this.wheel.tickMs, this);
      this.#interval.unref();
    }
    this.wheel.arm(deadline, nowMs, delayMs);
  }

  cancel<T>(deadline: Deadline<T>): void {
    this.wheel.cancel(deadline);
  }

  tick(): void {
    this.wheel.advance(performance.now());
    if (this.wheel.size !== 0) {
      this.#emptyTicks = 0;
      return;
    }
    if (++this.#emptyTicks <= this.#idleTicks || this.#interval === undefined) return;
    clearInterval(this.#interval);
    this.#interval = undefined;
    this.#emptyTicks = 0;
  }
}

function advanceClock(clock: DeadlineClock): void {
  clock.tick();
}
