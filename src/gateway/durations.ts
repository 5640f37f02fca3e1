/**
 * Gateway API `Duration` (GEP-2257): a subset of Go's time.ParseDuration, `^([0-9]{1,5}(h|m|s|ms)){1,4}$`.
 * Returns milliseconds, or undefined when the string is not a valid Gateway API duration.
 */
export function parseGatewayDuration(value: string): number | undefined {
  if (!/^([0-9]{1,5}(h|m|s|ms)){1,4}$/.test(value)) return undefined;
  let total = 0;
  for (const [, amount, unit] of value.matchAll(/([0-9]{1,5})(h|ms|m|s)/g)) {
    total += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
  }
  return total;
}

const UNIT_MS = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 } as const;
