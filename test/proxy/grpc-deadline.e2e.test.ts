import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { backend, entry, send, simpleTable, startProxy, type TestProxy, to } from './fixtures.ts';

/**
 * A gRPC client's deadline (grpc-timeout) bounds the whole exchange like HTTPRouteTimeouts.request. Issue 31:
 * it is read in the one pass over the raw request headers that builds the upstream head, not from req.headers.
 */
describe('grpc-timeout', () => {
  let proxy: TestProxy | undefined;
  let server: Server | undefined;
  afterEach(async () => {
    await proxy?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  });

  async function silentBackend(seen: IncomingHttpHeaders[]): Promise<number> {
    server = createServer((req) => seen.push(req.headers));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  it('ends a call the backend never answers at the deadline with DEADLINE_EXCEEDED, and forwards the header', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const cluster = backend('slow', [await silentBackend(seen)]);
    proxy = await startProxy(simpleTable([entry([to(cluster)])], [cluster]), undefined, {
      upstream: { responseTimeoutMs: 60_000 },
    });
    const answer = await send(proxy.port(), '/pkg.Service/Method', {
      method: 'POST',
      headers: { 'content-type': 'application/grpc', 'grpc-timeout': '150m', te: 'trailers' },
      body: Buffer.from([0, 0, 0, 0, 0]),
    });
    expect(answer.headers['grpc-status']).toBe('4');
    expect(seen[0]?.['grpc-timeout']).toBe('150m');
  });

  it('a repeated grpc-timeout is malformed, and sets no deadline, as gRPC servers read it', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const port = await silentBackend(seen);
    server!.removeAllListeners('request');
    server!.on('request', (req, res) => {
      seen.push(req.headers);
      // Later than the first value's deadline: answered only because no deadline was set.
      setTimeout(() => res.end('late'), 300);
    });
    const cluster = backend('slow', [port]);
    proxy = await startProxy(simpleTable([entry([to(cluster)])], [cluster]));
    const answer = await send(proxy.port(), '/pkg.Service/Method', {
      method: 'POST',
      headers: { 'content-type': 'application/grpc', 'grpc-timeout': ['50m', '60m'] },
      body: Buffer.from([0, 0, 0, 0, 0]),
    });
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('late');
  });
});
