const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;

/**
 * Parses a Go `time.ParseDuration` string (`500ms`, `1.5s`, `1m30s`) into milliseconds, as the Gateway API
 * conformance echo server reads its `delay` parameter. Undefined when the text is not a duration.
 */
export function parseGoDurationMs(text: string): number | undefined {
  if (text === '0') return 0;
  if (text.length === 0) return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < text.length) {
    const start = PART.lastIndex;
    const m = PART.exec(text);
    if (m === null || m.index !== start) return undefined;
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
  }
  return total;
}
