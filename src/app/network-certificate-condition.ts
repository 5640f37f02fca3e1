import type { NetworkRuntime } from '../admin/network-report.ts';
import type { TranslationResult } from '../gateway/translate.ts';
import type { GatewayStatus } from '../ir/status.ts';
import type { Condition } from '../snapshot/resources.ts';

/** The Gateway condition that says whether this gateway's network identity (docs/multi-network.md) is usable. */
export const NETWORK_CERTIFICATE_CONDITION = 'NetworkCertificateValid';

/**
 * The plain fact the condition is made of: where the network identity comes from, the SPIFFE ID and end of the
 * certificate in force, or, when none is in force, why. Never PEM.
 */
export interface NetworkIdentityFact {
  readonly source: string;
  readonly id?: string;
  /** Milliseconds since the epoch; absent while no usable certificate is loaded. */
  readonly notAfterMs?: number;
  /** Why none is loaded (names the file or object, never its content). */
  readonly problem?: string;
}

export type CertificateState = 'Valid' | 'Expiring' | 'Expired' | 'NotLoaded';

/** What the clock says of the fact now: expired at notAfter, expiring within `warningMs` of it. */
export function certificateState(
  fact: NetworkIdentityFact,
  nowMs: number,
  warningMs: number,
): CertificateState {
  if (fact.notAfterMs === undefined) return 'NotLoaded';
  const left = fact.notAfterMs - nowMs;
  return left <= 0 ? 'Expired' : left <= warningMs ? 'Expiring' : 'Valid';
}

/**
 * Milliseconds from now until the state changes by the clock alone (valid to expiring, expiring to expired);
 * undefined when it cannot (expired, or nothing loaded: only a new certificate changes that).
 */
export function untilNextTransition(
  fact: NetworkIdentityFact,
  nowMs: number,
  warningMs: number,
): number | undefined {
  if (fact.notAfterMs === undefined) return undefined;
  const state = certificateState(fact, nowMs, warningMs);
  if (state === 'Valid') return fact.notAfterMs - warningMs - nowMs + 1;
  if (state === 'Expiring') return fact.notAfterMs - nowMs;
  return undefined;
}

/**
 * Translation's statuses with the network identity's verdict laid on every Gateway: `NetworkCertificateValid`
 * True (`Valid`) while the certificate has more than `warningMs` left, False with `Expiring` within that window,
 * `Expired` past its end, `NotLoaded` while none is usable. The message names the certificate (SPIFFE ID and
 * source) and when it ends. Without a network identity (`fact` undefined) the result is returned as it is.
 */
export function withNetworkCertificate(
  result: TranslationResult,
  fact: NetworkIdentityFact | undefined,
  nowMs: number,
  warningMs: number,
): TranslationResult {
  if (fact === undefined) return result;
  const state = certificateState(fact, nowMs, warningMs);
  const message = describe(fact, state, warningMs);
  return {
    ...result,
    statuses: result.statuses.map((update) => {
      if (update.kind !== 'Gateway') return update;
      const status = update.status as GatewayStatus;
      const verdict: Condition = {
        type: NETWORK_CERTIFICATE_CONDITION,
        status: state === 'Valid' ? 'True' : 'False',
        reason: state,
        message,
        observedGeneration: update.generation,
      };
      const conditions = [
        ...status.conditions.filter((c) => c.type !== NETWORK_CERTIFICATE_CONDITION),
        verdict,
      ];
      return { ...update, status: { ...status, conditions } };
    }),
  };
}

function describe(fact: NetworkIdentityFact, state: CertificateState, warningMs: number): string {
  const what = `network certificate ${fact.id !== undefined ? `${fact.id} ` : ''}(${fact.source})`;
  if (fact.notAfterMs === undefined)
    return `no usable network certificate (${fact.source}): ${fact.problem ?? 'not loaded yet'}`;
  const when = new Date(fact.notAfterMs).toISOString();
  switch (state) {
    case 'Expired':
      return `${what} expired at ${when}`;
    case 'Expiring':
      return `${what} expires at ${when}, within the ${hours(warningMs)} warning window`;
    default:
      return `${what} is valid until ${when}`;
  }
}

function hours(ms: number): string {
  const h = ms / 3_600_000;
  return Number.isInteger(h) ? `${h}h` : `${Math.round(ms / 1000)}s`;
}

/** The fact from what the data plane reports of its identity; undefined when it has none configured. */
export function identityFact(
  identity: NetworkRuntime['identity'] | undefined,
): NetworkIdentityFact | undefined {
  if (identity === undefined) return undefined;
  const notAfterMs = identity.notAfter !== undefined ? Date.parse(identity.notAfter) : Number.NaN;
  if (identity.id === undefined || Number.isNaN(notAfterMs)) {
    const problem = identity.problems[0];
    return { source: identity.source, ...(problem !== undefined ? { problem } : {}) };
  }
  return { source: identity.source, id: identity.id, notAfterMs };
}
