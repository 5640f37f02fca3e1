import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { CompiledPort } from '../compile/compile-table.ts';
import type { ExchangeServices } from '../exchange/forward-exchange.ts';
import { matchRequest } from '../exchange/match-request.ts';
import { pickTarget, redirectLocation } from '../exchange/serve-request.ts';
import { type ResumeHttp1, UpgradeExchange } from '../exchange/upgrade-exchange.ts';
import { clientAllowsReuse, writeRawReply } from '../exchange/upgrade-response.ts';
import { buildUpstreamHead } from '../exchange/upstream-request.ts';

/**
 * Serves an Upgrade request (WebSocket and the like) handed over by the listener as a raw connection: routes it
 * like any request, answers what the gateway answers itself (no route, redirects, an invalid backend) on that
 * connection, and forwards the rest through the upgrade exchange (exchange/upgrade-exchange.ts), which picks,
 * retries and reports as every request does. Never throws.
 */
export function serveUpgrade(
  port: CompiledPort,
  req: IncomingMessage,
  socket: Duplex,
  firstBytes: Buffer,
  services: ExchangeServices,
  selectHost: string | undefined,
  resume: ResumeHttp1 | undefined,
): void {
  socket.on('error', () => socket.destroy());
  const startMs = performance.now();
  const answer = (status: number, text: string, extra = ''): number => {
    const bytes = writeRawReply(socket, status, text, extra);
    services.accessLog?.answered(req, status, bytes, startMs);
    return bytes;
  };
  const view = matchRequest(port, req, selectHost, services.paths);
  const action = view.action;
  if (action === undefined) {
    if (view.location !== undefined)
      answer(view.status, String(view.status), `location: ${view.location}\r\n`);
    else answer(view.status, view.status === 400 ? view.reason || 'bad request' : 'no route');
    const series = view.listener?.noRouteSeries ?? port.noListenerSeries;
    series.record(view.status, (performance.now() - startMs) / 1000);
    return;
  }
  const target = pickTarget(action);
  const redirect = action.redirect ?? target?.redirect;
  if (redirect !== undefined) {
    const location = redirectLocation(view, action, redirect);
    answer(redirect.statusCode, String(redirect.statusCode), `location: ${location}\r\n`);
    (target?.series ?? action.localSeries).record(redirect.statusCode, (performance.now() - startMs) / 1000);
    return;
  }
  if (target?.backend === undefined) {
    answer(500, 'invalid backend');
    (target?.series ?? action.localSeries).record(500, (performance.now() - startMs) / 1000);
    return;
  }
  const head = buildUpstreamHead(req, view, action, target, true);
  const reuse = resume !== undefined && clientAllowsReuse(req) ? resume : undefined;
  new UpgradeExchange(services, req, socket, firstBytes, action, target, head, startMs, reuse).start();
}
