import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { ParentOrRatioSampler, sampledByRatio } from '../../src/trace/sampler.ts';

const LOW = `${'a'.repeat(19)}0000000000001`; // random part near 0
const HIGH = `${'a'.repeat(19)}fffffffffffff`; // random part near 1
const MID = `${'a'.repeat(19)}8000000000000`; // exactly one half

function parentContext(sampled: boolean) {
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: 'b'.repeat(32),
    spanId: 'c'.repeat(16),
    traceFlags: sampled ? 1 : 0,
    isRemote: true,
  });
}

describe('sampling by ratio', () => {
  it('decides by the trace id alone', () => {
    expect(sampledByRatio(LOW, 0.01)).toBe(true);
    expect(sampledByRatio(HIGH, 0.99)).toBe(false);
    expect(sampledByRatio(MID, 0.5)).toBe(false);
    expect(sampledByRatio(MID, 0.5000001)).toBe(true);
  });

  it('samples everything at 1 and nothing at 0', () => {
    expect(sampledByRatio(HIGH, 1)).toBe(true);
    expect(sampledByRatio(LOW, 0)).toBe(false);
  });

  it('samples about the ratio of random trace ids', () => {
    let sampled = 0;
    let x = 12345;
    const hexDigit = (): string => {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      return ((x >>> 16) & 15).toString(16);
    };
    for (let i = 0; i < 10_000; i++) {
      const random = Array.from({ length: 13 }, hexDigit).join('');
      if (sampledByRatio(`${'0'.repeat(19)}${random}`, 0.25)) sampled++;
    }
    expect(sampled).toBeGreaterThan(2300);
    expect(sampled).toBeLessThan(2700);
  });
});

describe('the gateway sampler', () => {
  it("follows a parent's decision whatever the ratio", () => {
    expect(new ParentOrRatioSampler(0).shouldSample(parentContext(true), HIGH).decision).toBe(
      SamplingDecision.RECORD_AND_SAMPLED,
    );
    expect(new ParentOrRatioSampler(1).shouldSample(parentContext(false), LOW).decision).toBe(
      SamplingDecision.NOT_RECORD,
    );
  });

  it('samples a new trace by ratio', () => {
    const sampler = new ParentOrRatioSampler(0.5);
    expect(sampler.shouldSample(ROOT_CONTEXT, LOW).decision).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(sampler.shouldSample(ROOT_CONTEXT, HIGH).decision).toBe(SamplingDecision.NOT_RECORD);
  });
});
