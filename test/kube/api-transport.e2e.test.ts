import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeApiClient } from '../../src/kube/api-client.ts';
import { readBody, sendToApiServer } from '../../src/kube/api-endpoint.ts';
import { type WatchEnd, watchOnce } from '../../src/kube/watch-once.ts';
import { selfSignedCertificate } from '../../src/net/self-signed-certificate.ts';

/** The project's own client on the wire: a hostile watch stream, and a member behind an HTTP proxy. */
const servers: Server[] = [];
/** Tunnels a CONNECT proxy holds: closeAllConnections does not know them. */
const tunnelSockets: Socket[] = [];
afterEach(async () => {
  for (const socket of tunnelSockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

/** An API server whose watch of /api/v1/services answers with `answer`. */
async function watchServer(
  answer: (res: ServerResponse, req: IncomingMessage) => void,
): Promise<KubeApiClient> {
  const port = await listen(createServer((req, res) => answer(res, req)));
  return new KubeApiClient({ server: `http://127.0.0.1:${port}`, credentials: async () => ({}) });
}

const event = (type: string, object: unknown) => `${JSON.stringify({ type, object })}\n`;
const service = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, resourceVersion: '7' },
});

async function watch(client: KubeApiClient, stop = new AbortController()) {
  const objects: [string, unknown][] = [];
  const end: WatchEnd = await watchOnce(
    { client, path: '/api/v1/services', resourceVersion: '5', watchTimeoutSeconds: 60, stop: stop.signal },
    { onEvent: () => {}, onObject: (type, obj) => objects.push([type, obj]), onErrorEvent: () => {} },
  );
  return { end, objects };
}

describe('watching an API server', () => {
  it('asks from the resourceVersion with bookmarks, and reads one event per line however the bytes arrive', async () => {
    let url = '';
    const client = await watchServer((res, req) => {
      url = req.url ?? '';
      res.writeHead(200, { 'content-type': 'application/json' });
      const text = event('ADDED', service('a')) + event('BOOKMARK', { metadata: { resourceVersion: '9' } });
      // Split inside a line: the client must not parse half an event.
      res.write(text.slice(0, 17));
      setTimeout(() => res.end(text.slice(17)), 20);
    });
    const { end, objects } = await watch(client);
    expect(url).toMatch(
      /^\/api\/v1\/services\?watch=1&resourceVersion=5&allowWatchBookmarks=true&timeoutSeconds=\d+$/,
    );
    expect(objects.map(([type]) => type)).toEqual(['ADDED', 'BOOKMARK']);
    expect(end.kind).toBe('closed');
  });

  it('a connection cut mid-watch ends the watch as an error after the events before it, without crashing', async () => {
    const client = await watchServer((res) => {
      res.writeHead(200);
      res.write(event('ADDED', service('a')));
      res.write('{"type":"MODIFIED","obj');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const { end, objects } = await watch(client);
    expect(objects.map(([type]) => type)).toEqual(['ADDED']);
    expect(end.kind).toBe('error');
  });

  it('a line that is not a JSON event ends the watch as an error', async () => {
    const client = await watchServer((res) => {
      res.writeHead(200);
      res.write('<html>proxy error</html>\n');
    });
    const { end } = await watch(client);
    expect(end).toMatchObject({ kind: 'error' });
    expect(String((end as { error: unknown }).error)).toContain('not JSON');
  });

  it('410 Gone, as a status or as an ERROR event, ends it as expired (relist)', async () => {
    const asStatus = await watchServer((res) => {
      res.writeHead(410, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old' }));
    });
    expect((await watch(asStatus)).end.kind).toBe('expired');
    const asEvent = await watchServer((res) => {
      res.writeHead(200);
      res.write(event('ERROR', { kind: 'Status', code: 410, reason: 'Expired' }));
    });
    expect((await watch(asEvent)).end.kind).toBe('expired');
  });

  it('stop ends a quiet watch as closed', async () => {
    const client = await watchServer((res) => res.writeHead(200));
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 50);
    expect((await watch(client, stop)).end.kind).toBe('closed');
  });
});

describe('an API server behind an HTTP proxy (proxy-url)', () => {
  it('tunnels HTTPS through CONNECT, verifying the server against its CA', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'api-transport-'));
    try {
      const certificate = selfSignedCertificate({
        dir,
        name: 'api',
        commonName: 'api.member.test',
        subjectAltNames: ['DNS:api.member.test'],
        days: 1,
      });
      const api = createHttpsServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ path: req.url, authorization: req.headers.authorization }));
      });
      const apiPort = await listen(api);
      const tunnels: string[] = [];
      const proxy = createServer();
      proxy.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
        tunnels.push(req.url ?? '');
        tunnelSockets.push(client);
        // The name is the member's; this proxy knows where it lives.
        const upstream = connect(apiPort, '127.0.0.1', () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          upstream.write(head);
          upstream.pipe(client);
          client.pipe(upstream);
        });
        tunnelSockets.push(upstream);
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
      });
      const proxyPort = await listen(proxy);
      const response = await sendToApiServer(
        {
          server: 'https://api.member.test:6443',
          proxyUrl: `http://127.0.0.1:${proxyPort}`,
          credentials: async () => ({ ca: certificate.cert, headers: { authorization: 'Bearer t0ken' } }),
        },
        { method: 'GET', path: '/api/v1/services?limit=1' },
      );
      expect(response.statusCode).toBe(200);
      expect(JSON.parse(await readBody(response))).toEqual({
        path: '/api/v1/services?limit=1',
        authorization: 'Bearer t0ken',
      });
      expect(tunnels).toEqual(['api.member.test:6443']);
      // A proxy that refuses the tunnel is an error naming the proxy, not a hang.
      proxy.removeAllListeners('connect');
      proxy.on('connect', (_req: IncomingMessage, client: Socket) =>
        client.end('HTTP/1.1 403 Forbidden\r\n\r\n'),
      );
      await expect(
        sendToApiServer(
          {
            server: 'https://other.member.test:6443',
            proxyUrl: `http://127.0.0.1:${proxyPort}`,
            credentials: async () => ({ ca: certificate.cert }),
          },
          { method: 'GET', path: '/api/v1/services' },
        ),
      ).rejects.toThrow(/refused CONNECT other\.member\.test:6443: 403/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
