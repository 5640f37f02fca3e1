import { describe, expect, it } from 'vitest';
import {
  acceptedTracestate,
  formatTraceparent,
  incomingTraceParent,
  parseTraceparent,
} from '../../src/trace/traceparent.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('traceparent', () => {
  it('reads a valid version 00 value and its sampled flag', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      sampled: true,
    });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)?.sampled).toBe(false);
    // Other flag bits say nothing about sampling.
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-02`)?.sampled).toBe(false);
  });

  it('reads a later version by its first 55 characters, and only when what follows starts with a dash', () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-extra`)?.traceId).toBe(TRACE);
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01extra`)).toBeUndefined();
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01-extra`)).toBeUndefined();
  });

  it.each([
    ['empty', ''],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['not hex', `00-${TRACE.slice(1)}g-${SPAN}-01`],
    ['wrong separators', `00_${TRACE}_${SPAN}_01`],
    ['oversized', `01-${TRACE}-${SPAN}-01-${'a'.repeat(300)}`],
  ])('refuses %s', (_, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  it('writes version 00 with the sampled flag', () => {
    expect(formatTraceparent(TRACE, SPAN, true)).toBe(`00-${TRACE}-${SPAN}-01`);
    expect(formatTraceparent(TRACE, SPAN, false)).toBe(`00-${TRACE}-${SPAN}-00`);
  });
});

describe('tracestate', () => {
  it('keeps a well-formed list as it came', () => {
    expect(acceptedTracestate('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE')).toBe(
      'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
    );
    expect(acceptedTracestate('tenant@vendor=v, other=x')).toBe('tenant@vendor=v, other=x');
  });

  it('drops a malformed, too long or too crowded list whole', () => {
    expect(acceptedTracestate('Upper=x')).toBeUndefined();
    expect(acceptedTracestate('a=b=c')).toBeUndefined();
    expect(acceptedTracestate('novalue')).toBeUndefined();
    expect(acceptedTracestate(`a=${'x'.repeat(600)}`)).toBeUndefined();
    expect(acceptedTracestate(Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(','))).toBeUndefined();
    expect(acceptedTracestate(' , ')).toBeUndefined();
  });
});

describe('incoming trace context', () => {
  it('finds traceparent and tracestate by any case, joining repeated tracestate headers', () => {
    const parent = incomingTraceParent([
      'Host',
      'a',
      'TraceParent',
      `00-${TRACE}-${SPAN}-01`,
      'tracestate',
      'a=1',
      'TRACESTATE',
      'b=2',
    ]);
    expect(parent).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true, tracestate: 'a=1,b=2' });
  });

  it('has no parent without traceparent, with two of them or a malformed one, and then ignores tracestate', () => {
    expect(incomingTraceParent(['tracestate', 'a=1'])).toBeUndefined();
    expect(
      incomingTraceParent(['traceparent', `00-${TRACE}-${SPAN}-01`, 'traceparent', `00-${TRACE}-${SPAN}-01`]),
    ).toBeUndefined();
    expect(incomingTraceParent(['traceparent', 'garbage', 'tracestate', 'a=1'])).toBeUndefined();
  });

  it('keeps the parent but not an invalid tracestate', () => {
    expect(incomingTraceParent(['traceparent', `00-${TRACE}-${SPAN}-00`, 'tracestate', 'BAD'])).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      sampled: false,
    });
  });
});
