import { promisify } from 'node:util';

/**
 * Catches unit tests that wait on the wall clock: a real (not faked) setTimeout or setInterval of at least
 * REAL_WAIT_MIN_MS whose callback fires is recorded, and test/support/unit-guard.ts fails the test that let it
 * fire. Timers armed and cleared (a timeout that never elapses) cost nothing; fake timers (vi.useFakeTimers)
 * replace these functions, so what they schedule is never seen here.
 */
export const REAL_WAIT_MIN_MS = 5;

const waits: string[] = [];
const INSTALLED = Symbol.for('clusterset-gateway.real-time-guard');

function where(): string {
  const lines = (new Error().stack ?? '').split('\n').slice(3);
  return (
    lines.find((line) => /\/(test|src)\//.test(line) && !line.includes('real-time-guard'))?.trim() ?? '?'
  );
}

function wrap<F extends typeof setTimeout | typeof setInterval>(real: F, kind: string): F {
  const wrapped = ((callback: unknown, ms?: number, ...args: unknown[]) => {
    if (typeof callback !== 'function' || (ms ?? 0) < REAL_WAIT_MIN_MS) {
      return (real as (...a: unknown[]) => unknown)(callback, ms, ...args);
    }
    const armedAt = where();
    const fire = (...fired: unknown[]): unknown => {
      waits.push(`a real ${kind} of ${ms} ms fired (armed ${armedAt})`);
      return (callback as (...a: unknown[]) => unknown)(...fired);
    };
    return (real as (...a: unknown[]) => unknown)(fire, ms, ...args);
  }) as F;
  const custom = (real as unknown as Record<symbol, unknown>)[promisify.custom];
  if (custom !== undefined) Object.defineProperty(wrapped, promisify.custom, { value: custom });
  return wrapped;
}

export function installRealTimeGuard(): void {
  const global = globalThis as unknown as Record<symbol, boolean>;
  if (global[INSTALLED]) return;
  global[INSTALLED] = true;
  globalThis.setTimeout = wrap(globalThis.setTimeout, 'setTimeout');
  globalThis.setInterval = wrap(globalThis.setInterval, 'setInterval');
}

/** The real waits recorded since the last call, and forgets them. */
export function takeRealTimeWaits(): string[] {
  return waits.splice(0);
}
