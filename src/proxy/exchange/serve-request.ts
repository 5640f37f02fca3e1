import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CompiledAction, ForwardTarget } from '../compile/compile-actions.ts';
import type { CompiledPort } from '../compile/compile-table.ts';
import type { CompiledCors } from '../compile/cors.ts';
import type { CompiledRedirect } from '../compile/redirect.ts';
import { Exchange, type ExchangeServices } from './forward-exchange.ts';
import { isMisdirected } from './http2-misdirected.ts';
import { sendLocalReply } from './local-reply.ts';
import { matchRequest } from './match-request.ts';
import type { RequestView } from './request-view.ts';
import { type RequestSession, sessionTarget } from './session-persistence.ts';
import { buildUpstreamHead } from './upstream-request.ts';

/** Chooses a backendRef by weight; undefined when the rule has none with a positive weight. */
export function pickTarget(action: CompiledAction): ForwardTarget | undefined {
  const targets = action.targets;
  if (targets.length <= 1) return targets[0];
  const r = Math.random() * action.totalWeight;
  const cumulative = action.cumulative;
  for (let i = 0; i < cumulative.length; i++) if (r < cumulative[i]!) return targets[i];
  return targets[targets.length - 1];
}

/** Whether the rule, or a backend it may pick, has session persistence (no allocation: the common case is no). */
function usesSessions(action: CompiledAction): boolean {
  if (action.sessionPersistence !== undefined) return true;
  for (const target of action.targets)
    if (target.backend?.cluster.sessionPersistence !== undefined) return true;
  return false;
}

/** The Location of a RequestRedirect for this request (shared with upgrade requests). */
export function redirectLocation(
  view: RequestView,
  action: CompiledAction,
  redirect: CompiledRedirect,
): string {
  return redirect.location({
    scheme: action.scheme,
    host: view.host,
    path: view.path,
    query: view.rawQuery === '' ? '' : `?${view.rawQuery}`,
    matchedPrefix: action.matchedPrefix,
    listenerPort: action.listenerPort,
  });
}

function sendRedirect(
  view: RequestView,
  res: ServerResponse,
  action: CompiledAction,
  redirect: CompiledRedirect,
): number {
  return sendLocalReply(res, redirect.statusCode, '', ['location', redirectLocation(view, action, redirect)]);
}

/** The access log's line for an answer the gateway gave itself (nothing when the log is off). */
function logAnswer(
  services: ExchangeServices,
  req: IncomingMessage,
  res: ServerResponse,
  bytes: number,
  startMs: number,
): void {
  services.accessLog?.answered(req, res.statusCode, bytes, startMs);
}

/**
 * Answers a CORS preflight (OPTIONS with Origin and Access-Control-Request-Method) at the gateway
 * (GEP-1767); returns true when it did. Otherwise returns the allowed origin for decorating the response.
 */
function handleCors(view: RequestView, res: ServerResponse, cors: CompiledCors): string | true | undefined {
  const origin = view.header('origin');
  if (origin === undefined) return undefined;
  const allowed = cors.allowOrigin(origin);
  const requestMethod =
    view.req.method === 'OPTIONS' ? view.header('access-control-request-method') : undefined;
  if (requestMethod === undefined) return allowed;
  const headers =
    allowed === undefined
      ? []
      : cors.preflightHeaders(allowed, requestMethod, view.header('access-control-request-headers'));
  headers.push('content-length', '0');
  res.writeHead(200, headers);
  res.end();
  return true;
}

/** Serves one HTTP request on a listener port: match, local answers, then forward. Never throws. */
export function serveRequest(
  services: ExchangeServices,
  port: CompiledPort,
  req: IncomingMessage,
  res: ServerResponse,
): Exchange | undefined {
  const startMs = performance.now();
  const view = matchRequest(port, req, undefined, services.paths);
  if (port.tls !== undefined && view.status !== 400 && isMisdirected(port, req, view.listener)) {
    view.action = undefined;
    view.status = 421;
  }
  const action = view.action;
  if (action === undefined) {
    const bytes = sendLocalReply(
      res,
      view.status,
      view.reason,
      view.location === undefined ? undefined : ['location', view.location],
    );
    const series = view.listener?.noRouteSeries ?? port.noListenerSeries;
    series.record(view.status, (performance.now() - startMs) / 1000);
    logAnswer(services, req, res, bytes, startMs);
    return undefined;
  }
  return serveAction(services, view, action, req, res, startMs);
}

/**
 * Serves a request whose route entry is chosen (north-south and east-west alike): CORS, redirects, then a
 * backendRef by weight and the forward. Returns the Exchange when the request is forwarded.
 */
export function serveAction(
  services: ExchangeServices,
  view: RequestView,
  action: CompiledAction,
  req: IncomingMessage,
  res: ServerResponse,
  startMs: number,
): Exchange | undefined {
  let corsOrigin: string | undefined;
  if (action.cors !== undefined) {
    const cors = handleCors(view, res, action.cors);
    if (cors === true) {
      action.localSeries.record(200, (performance.now() - startMs) / 1000);
      logAnswer(services, req, res, 0, startMs);
      return;
    }
    corsOrigin = cors;
  }
  if (action.redirect !== undefined) {
    const bytes = sendRedirect(view, res, action, action.redirect);
    action.localSeries.record(action.redirect.statusCode, (performance.now() - startMs) / 1000);
    logAnswer(services, req, res, bytes, startMs);
    return;
  }
  let target: ForwardTarget | undefined;
  let session: RequestSession | undefined;
  const sessions = services.sessions;
  if (sessions !== undefined && usesSessions(action))
    ({ target, session } = sessionTarget(sessions, req, action, pickTarget));
  else target = pickTarget(action);
  if (target === undefined) {
    // A rule without usable backendRefs answers 500 (HTTPRouteRule.backendRefs).
    const bytes = sendLocalReply(res, 500);
    action.localSeries.record(500, (performance.now() - startMs) / 1000);
    logAnswer(services, req, res, bytes, startMs);
    return;
  }
  if (target.cors !== undefined && target.cors !== action.cors) {
    const cors = handleCors(view, res, target.cors);
    if (cors === true) {
      target.series.record(200, (performance.now() - startMs) / 1000);
      logAnswer(services, req, res, 0, startMs);
      return;
    }
    corsOrigin = cors;
  }
  if (target.redirect !== undefined) {
    const bytes = sendRedirect(view, res, action, target.redirect);
    target.series.record(target.redirect.statusCode, (performance.now() - startMs) / 1000);
    logAnswer(services, req, res, bytes, startMs);
    return;
  }
  if (target.backend === undefined) {
    // "Requests that would have been sent to an invalid backend must receive a 500" (HTTPBackendRef).
    const bytes = sendLocalReply(res, 500);
    target.series.record(500, (performance.now() - startMs) / 1000);
    logAnswer(services, req, res, bytes, startMs);
    return;
  }
  const head = buildUpstreamHead(req, view, action, target, false);
  const exchange = new Exchange(services, req, res, action, target, head, startMs, corsOrigin);
  exchange.session = session;
  exchange.start();
  return exchange;
}
