import { type Context, isSpanContextValid, trace } from '@opentelemetry/api';
import { type Sampler, SamplingDecision, type SamplingResult } from '@opentelemetry/sdk-trace-base';

const TWO_POW_52 = 2 ** 52;

/**
 * Whether a new trace is sampled at `ratio` (0..1), decided by its trace id alone: its 52 rightmost bits (the
 * random part, W3C Trace Context Level 2) read as a fraction below `ratio`. Every hop sampling by the same rule and
 * ratio makes the same decision for one trace, and the decision needs no random draw of its own.
 */
export function sampledByRatio(traceId: string, ratio: number): boolean {
  if (ratio >= 1) return true;
  if (ratio <= 0) return false;
  return Number.parseInt(traceId.slice(19), 16) < ratio * TWO_POW_52;
}

const RECORD: SamplingResult = { decision: SamplingDecision.RECORD_AND_SAMPLED };
const DROP: SamplingResult = { decision: SamplingDecision.NOT_RECORD };

/**
 * The gateway's sampler: a span with a parent follows the parent's decision (the caller's `traceparent` flag for a
 * request's server span, the server span's for its attempts); a trace the gateway starts is sampled by ratio.
 */
export class ParentOrRatioSampler implements Sampler {
  readonly #ratio: number;

  constructor(ratio: number) {
    this.#ratio = ratio;
  }

  shouldSample(context: Context, traceId: string): SamplingResult {
    const parent = trace.getSpanContext(context);
    if (parent !== undefined && isSpanContextValid(parent))
      return (parent.traceFlags & 1) === 1 ? RECORD : DROP;
    return sampledByRatio(traceId, this.#ratio) ? RECORD : DROP;
  }

  toString(): string {
    return `ParentOrRatioSampler{${this.#ratio}}`;
  }
}
