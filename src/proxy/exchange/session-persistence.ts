import type { IncomingMessage } from 'node:http';
import type { BackendCluster, UpstreamEndpoint } from '../../ir/route-table.ts';
import type { SessionPersistenceConfig } from '../../ir/session-persistence.ts';
import { type PinOutcome, pinOutcome, type SessionPinning } from '../../lb/pinned-pick.ts';
import type { CompiledAction, ForwardTarget } from '../compile/compile-actions.ts';
import { backendHash, type IgnoredReason, type SessionPin, type SessionTokens } from './session-token.ts';

/** How a request with session persistence was served: against its value, or `new` (no usable value). */
export type SessionOutcome = PinOutcome | 'new';

/** What the data plane needs for session persistence: the sealing keys and the counters (app wires them). */
export interface SessionServices {
  readonly tokens: SessionTokens;
  counted(outcome: SessionOutcome): void;
  ignored(reason: IgnoredReason): void;
}

/** One request's session: the config in force and the pin its value carried (undefined: a fresh pick). */
export interface RequestSession {
  readonly config: SessionPersistenceConfig;
  readonly pin: SessionPin | undefined;
}

/** The raw value a request carries for `config`: its cookie (the first of that name) or its header. */
export function sessionValue(req: IncomingMessage, config: SessionPersistenceConfig): string | undefined {
  if (config.type === 'Header') {
    const value = req.headers[config.name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  }
  const cookie = req.headers.cookie;
  if (cookie === undefined) return undefined;
  const prefix = `${config.name}=`;
  for (const part of cookie.split(';')) {
    const pair = part.trim();
    if (pair.startsWith(prefix)) return pair.slice(prefix.length);
  }
  return undefined;
}

/**
 * Chooses the backendRef and reads the session for a request. A rule's own session persistence picks the
 * backendRef its value names (the weights decide only without one); a backend's (XBackendTrafficPolicy) applies
 * after the weighted pick. A value that cannot be honoured is counted by reason and the request picks afresh.
 */
export function sessionTarget(
  services: SessionServices,
  req: IncomingMessage,
  action: CompiledAction,
  pickTarget: (action: CompiledAction) => ForwardTarget | undefined,
): { readonly target: ForwardTarget | undefined; readonly session: RequestSession | undefined } {
  const ruleConfig = action.sessionPersistence;
  if (ruleConfig !== undefined) {
    const raw = sessionValue(req, ruleConfig);
    if (raw !== undefined) {
      const opened = services.tokens.open(raw, undefined, ruleConfig.absoluteTimeoutMs);
      if (typeof opened === 'string') services.ignored(opened);
      else {
        const target = action.targets.find(
          (t) => t.backend !== undefined && backendHash(t.backend.id) === opened.backend,
        );
        if (target !== undefined) return { target, session: { config: ruleConfig, pin: opened } };
        services.ignored('other-backend');
      }
    }
    return { target: pickTarget(action), session: { config: ruleConfig, pin: undefined } };
  }
  const target = pickTarget(action);
  const backend = target?.backend;
  const config = backend?.cluster.sessionPersistence;
  if (backend === undefined || config === undefined) return { target, session: undefined };
  const raw = sessionValue(req, config);
  if (raw === undefined) return { target, session: { config, pin: undefined } };
  const opened = services.tokens.open(raw, backendHash(backend.id), config.absoluteTimeoutMs);
  if (typeof opened === 'string') {
    services.ignored(opened);
    return { target, session: { config, pin: undefined } };
  }
  return { target, session: { config, pin: opened } };
}

/** The backend's pinning: ClusterSelectionPolicy `sessionPinning: Cluster`, else the spec's endpoint pinning. */
export function pinningOf(cluster: BackendCluster): SessionPinning {
  return cluster.clusterSelection?.sessionPinning === 'Cluster' ? 'Cluster' : 'Endpoint';
}

/**
 * Counts how the request was served and appends the new value to the response headers when the session was
 * pinned afresh (no value, or another endpoint than its value's): a value is re-issued only then, so the
 * absolute timeout counts from the first pick of an endpoint, as a pin's age should.
 */
export function addSessionHeaders(
  services: SessionServices,
  session: RequestSession,
  backendId: string,
  endpoint: UpstreamEndpoint,
  secure: boolean,
  cookiePath: string,
  headers: string[],
): void {
  const outcome: SessionOutcome = session.pin === undefined ? 'new' : pinOutcome(session.pin, endpoint);
  services.counted(outcome);
  if (outcome === 'kept') return;
  const value = services.tokens.seal(backendHash(backendId), endpoint.cluster, endpoint.key);
  if (value === undefined) return;
  const config = session.config;
  if (config.type === 'Header') {
    headers.push(config.name, value);
    return;
  }
  let cookie = `${config.name}=${value}; Path=${cookiePath}; HttpOnly`;
  if (config.lifetime === 'Permanent' && config.absoluteTimeoutMs !== undefined)
    cookie += `; Max-Age=${Math.floor(config.absoluteTimeoutMs / 1000)}`;
  if (secure) cookie += '; Secure';
  headers.push('set-cookie', cookie);
}
