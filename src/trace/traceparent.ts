/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): reading a request's `traceparent` and `tracestate`
 * and writing the one sent upstream. Pure; whatever fails to parse is simply no parent, so the request starts a
 * trace of its own and the client never sees an error for it.
 */

/** The parent a request carried: its trace, the caller's span and the caller's sampling decision. */
export interface TraceParent {
  /** 32 lower-case hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lower-case hex digits, not all zero: the caller's span. */
  readonly spanId: string;
  readonly sampled: boolean;
  /** The caller's `tracestate`, passed on unchanged; absent when there was none or it was not valid. */
  readonly tracestate?: string;
}

/** Longer `traceparent` values are not read (a future version may append fields; 55 characters is version 00). */
export const MAX_TRACEPARENT_LENGTH = 256;
/** The limit the specification asks every vendor to propagate; longer `tracestate` values are dropped. */
export const MAX_TRACESTATE_LENGTH = 512;
export const MAX_TRACESTATE_MEMBERS = 32;

const VERSION_00_LENGTH = 55;
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

/** One `traceparent` value, or undefined when it is malformed, oversized or names an invalid version or id. */
export function parseTraceparent(value: string): Omit<TraceParent, 'tracestate'> | undefined {
  const text = value.trim();
  if (text.length < VERSION_00_LENGTH || text.length > MAX_TRACEPARENT_LENGTH) return undefined;
  const version = text.slice(0, 2);
  // Version 00 is exactly 55 characters; a later version may carry more after a '-', which is not read.
  if (text.length !== VERSION_00_LENGTH && (version === '00' || text.charCodeAt(VERSION_00_LENGTH) !== 45))
    return undefined;
  const match = TRACEPARENT.exec(text.slice(0, VERSION_00_LENGTH));
  if (match === null || version === 'ff') return undefined;
  const traceId = match[2]!;
  const spanId = match[3]!;
  if (traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) return undefined;
  return { traceId, spanId, sampled: (Number.parseInt(match[4]!, 16) & 1) === 1 };
}

// list-member = key "=" value (W3C Trace Context §3.3.1).
const SIMPLE_KEY = '[a-z][a-z0-9_\\-*/]{0,255}';
const TENANT_KEY = '[a-z0-9][a-z0-9_\\-*/]{0,240}@[a-z][a-z0-9_\\-*/]{0,13}';
const MEMBER = new RegExp(
  `^(?:${SIMPLE_KEY}|${TENANT_KEY})=[\\x20-\\x2b\\x2d-\\x3c\\x3e-\\x7e]{0,255}[\\x21-\\x2b\\x2d-\\x3c\\x3e-\\x7e]$`,
);

/**
 * The `tracestate` to pass on: the value as received when every list member is well formed and it keeps within
 * 512 characters and 32 members, else undefined (dropped whole rather than half-understood).
 */
export function acceptedTracestate(value: string): string | undefined {
  if (value.length > MAX_TRACESTATE_LENGTH) return undefined;
  let members = 0;
  for (const part of value.split(',')) {
    const member = part.trim();
    if (member === '') continue;
    if (++members > MAX_TRACESTATE_MEMBERS || !MEMBER.test(member)) return undefined;
  }
  return members === 0 ? undefined : value.trim();
}

/**
 * The parent a request's raw headers (name, value, ...) carry, or undefined: none, more than one `traceparent`
 * (the specification makes that invalid), or one that does not parse. Several `tracestate` headers are one list.
 */
export function incomingTraceParent(rawHeaders: readonly string[]): TraceParent | undefined {
  let traceparent: string | undefined;
  let tracestate: string | undefined;
  let repeated = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 11 && name.toLowerCase() === 'traceparent') {
      if (traceparent !== undefined) repeated = true;
      traceparent = rawHeaders[i + 1]!;
    } else if (name.length === 10 && name.toLowerCase() === 'tracestate') {
      const value = rawHeaders[i + 1]!;
      tracestate = tracestate === undefined ? value : `${tracestate},${value}`;
    }
  }
  if (traceparent === undefined || repeated) return undefined;
  const parent = parseTraceparent(traceparent);
  if (parent === undefined) return undefined;
  const state = tracestate === undefined ? undefined : acceptedTracestate(tracestate);
  return state === undefined ? parent : { ...parent, tracestate: state };
}

/** The `traceparent` (version 00) naming `spanId` as the parent of what the receiver does. */
export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}

/** Whether a raw header name is one of the two trace context headers (the gateway writes its own). */
export function isTraceContextHeader(name: string): boolean {
  return (
    (name.length === 11 && name.toLowerCase() === 'traceparent') ||
    (name.length === 10 && name.toLowerCase() === 'tracestate')
  );
}
