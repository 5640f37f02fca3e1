/** Why a flow left the table. */
export type FlowEnd = 'idle' | 'evicted' | 'endpoint-gone' | 'error' | 'closed';

export interface FlowTableOptions {
  /** A flow with no datagram either way for this long expires (`--udp-flow-idle-timeout-ms`). */
  readonly idleTimeoutMs: number;
  /** At most this many flows; a new one evicts the flow idle longest (`--udp-max-flows`). */
  readonly maxFlows: number;
}

export const DEFAULT_FLOW_TABLE_OPTIONS: FlowTableOptions = {
  idleTimeoutMs: 60_000,
  maxFlows: 4_096,
};

interface Entry<F> {
  readonly flow: F;
  lastSeenMs: number;
}

/**
 * UDP flows by client (address and port), bounded and in order of last activity: a Map keeps insertion order,
 * and every datagram either way moves its flow to the end, so the flow idle longest is always first. Expiry
 * and eviction read from the front and stop at the first live flow. Pure: the caller passes the time.
 */
export class FlowTable<F> {
  readonly #entries = new Map<string, Entry<F>>();
  readonly #options: FlowTableOptions;

  constructor(options: FlowTableOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The client's flow, marked active now; undefined when it has none (or it had expired). */
  touch(key: string, nowMs: number): F | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    entry.lastSeenMs = nowMs;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.flow;
  }

  /**
   * Adds a client's flow, active now. When the table is full, the flow idle longest makes room; it is returned
   * so that the caller closes it (and counts it).
   */
  add(key: string, flow: F, nowMs: number): F | undefined {
    let evicted: F | undefined;
    if (!this.#entries.has(key) && this.#entries.size >= this.#options.maxFlows) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) {
        evicted = this.#entries.get(oldest.value)?.flow;
        this.#entries.delete(oldest.value);
      }
    }
    this.#entries.set(key, { flow, lastSeenMs: nowMs });
    return evicted;
  }

  /** Removes a flow if it is still the client's one. */
  delete(key: string, flow: F): boolean {
    if (this.#entries.get(key)?.flow !== flow) return false;
    return this.#entries.delete(key);
  }

  /** Removes and returns the flows idle for the timeout or longer, idle longest first. */
  expire(nowMs: number): F[] {
    const expired: F[] = [];
    for (const [key, entry] of this.#entries) {
      if (nowMs - entry.lastSeenMs < this.#options.idleTimeoutMs) break;
      this.#entries.delete(key);
      expired.push(entry.flow);
    }
    return expired;
  }

  /** Removes and returns the flows `ends` says must go (e.g. their endpoint went away). */
  removeWhere(ends: (flow: F) => boolean): F[] {
    const removed: F[] = [];
    for (const [key, entry] of this.#entries) {
      if (!ends(entry.flow)) continue;
      this.#entries.delete(key);
      removed.push(entry.flow);
    }
    return removed;
  }

  /** Empties the table, returning every flow. */
  clear(): F[] {
    const all = [...this.#entries.values()].map((e) => e.flow);
    this.#entries.clear();
    return all;
  }
}
