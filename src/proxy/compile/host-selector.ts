/**
 * Chooses the most specific hostname pattern for a request host: exact names through a map, then `*.suffix`
 * wildcards from the longest suffix down (one map lookup per label), then the catch-all. Gateway API wildcards
 * match one or more leading labels: `*.example.com` matches `a.example.com` and `a.b.example.com`, never
 * `example.com` (Listener.hostname, HTTPRoute.spec.hostnames).
 */
export class HostSelector<T> {
  readonly #exact = new Map<string, T>();
  /** Keyed by the suffix with its leading dot (`.example.com`). */
  readonly #wildcard = new Map<string, T>();
  #any: T | undefined;

  /** Adds a pattern; the first value added for a pattern wins, as the IR lists the preferred one first. */
  add(pattern: string | undefined, value: T): void {
    if (pattern === undefined || pattern === '*' || pattern === '') {
      this.#any ??= value;
      return;
    }
    const lower = pattern.toLowerCase();
    if (lower.startsWith('*.')) {
      const suffix = lower.slice(1);
      if (!this.#wildcard.has(suffix)) this.#wildcard.set(suffix, value);
    } else if (!this.#exact.has(lower)) {
      this.#exact.set(lower, value);
    }
  }

  /** `host` must already be lower-case and without port. */
  select(host: string): T | undefined {
    const exact = this.#exact.get(host);
    if (exact !== undefined) return exact;
    if (this.#wildcard.size > 0) {
      // The first dot must leave at least one label in front, so start at index 1.
      let dot = host.indexOf('.', 1);
      while (dot !== -1) {
        const hit = this.#wildcard.get(host.slice(dot));
        if (hit !== undefined) return hit;
        dot = host.indexOf('.', dot + 1);
      }
    }
    return this.#any;
  }

  values(): T[] {
    const out = [...this.#exact.values(), ...this.#wildcard.values()];
    if (this.#any !== undefined) out.push(this.#any);
    return out;
  }
}
