import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../../src/net/self-signed-certificate.ts';
import { builtProgram, freePort } from '../support/gateway-process.ts';
import type { KubeApiServer } from '../support/kube-api-server/index.ts';
import { httpsGet } from '../tls/sockets.ts';
import { GATEWAY_API, gatewayClass, withServer } from './helpers.ts';

/**
 * Issue 28, as a user meets it: the gateway runs with --kubernetes against the API test server, a TLS Secret
 * exists that nothing references (so the gateway holds its identity only), then a Gateway listener starts to
 * reference it: the gateway fetches it and serves HTTPS with that certificate. The key never shows in
 * /config_dump or the logs.
 */

const ROOT = resolve(import.meta.dirname, '../..');

/** An offset under which both listener ports (10000 and 10001) are free on 127.0.0.1. */
async function listenerPortOffset(): Promise<number> {
  for (;;) {
    const port = await freePort();
    const other = createServer();
    const free = await new Promise<boolean>((res) => {
      other.once('error', () => res(false));
      other.listen(port - 1, '127.0.0.1', () => res(true));
    });
    if (free) {
      await new Promise<void>((res) => other.close(() => res()));
      return port - 10_001;
    }
  }
}

async function until<T>(check: () => Promise<T | undefined>, what: string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a Secret referenced after start, with --kubernetes', () => {
  let server: KubeApiServer;
  let child: ChildProcess;
  let output = '';
  let dir: string;
  let adminPort: number;
  let offset: number;
  const gateway = (https: boolean) => ({
    apiVersion: GATEWAY_API,
    kind: 'Gateway',
    metadata: { name: 'edge', namespace: 'default' },
    spec: {
      gatewayClassName: 'clusterset',
      listeners: [
        { name: 'http', port: 10_000, protocol: 'HTTP' },
        ...(https
          ? [
              {
                name: 'https',
                port: 10_001,
                protocol: 'HTTPS',
                hostname: 'shop.example.com',
                tls: { certificateRefs: [{ name: 'shop-cert' }] },
              },
            ]
          : []),
      ],
    },
  });
  let cert: { cert: string; key: string };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csgw-secret-tls-'));
    cert = selfSignedCertificate({
      dir,
      name: 'shop',
      commonName: 'shop.example.com',
      subjectAltNames: ['DNS:shop.example.com'],
      days: 1,
    });
    server = await withServer();
    server.create(gatewayClass());
    server.create(gateway(false));
    server.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'shop-cert', namespace: 'default' },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': Buffer.from(cert.cert).toString('base64'),
        'tls.key': Buffer.from(cert.key).toString('base64'),
      },
    });
    adminPort = await freePort();
    offset = await listenerPortOffset();
    child = spawn(
      process.execPath,
      [
        builtProgram(),
        '--kubernetes',
        '--kubeconfig',
        server.writeKubeconfig(join(dir, 'kubeconfig'), 'token'),
        '--address',
        '127.0.0.1',
        '--admin-address',
        '127.0.0.1',
        '--admin-port',
        String(adminPort),
        '--listener-port-offset',
        String(offset),
        '--log-level',
        'debug',
      ],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...process.env,
          KUBERNETES_SERVICE_HOST: '',
          POD_NAME: 'gw-0',
          POD_NAMESPACE: 'default',
          KUBECONFIG: '',
        },
      },
    );
    child.stdout?.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      output += c.toString();
    });
    await until(
      async () => ((await fetch(`http://127.0.0.1:${adminPort}/readyz`)).status === 200 ? true : undefined),
      'readyz',
      60_000,
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${output}`);
    });
  }, 90_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((res) => child.once('exit', res));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves HTTPS with the certificate once a listener references it; the key never shows', async () => {
    const dump = async () => (await fetch(`http://127.0.0.1:${adminPort}/config_dump`)).text();
    const keyBody = cert.key.split('\n')[1] as string;
    expect(await dump()).not.toContain(keyBody);

    server.patch('gateways.gateway.networking.k8s.io', 'default', 'edge', {
      spec: { listeners: gateway(true).spec.listeners },
    });
    // `ca` is the certificate itself: the handshake succeeds only if the gateway presents exactly it.
    const answer = await until(
      () => httpsGet(10_001 + offset, { servername: 'shop.example.com', ca: cert.cert, agent: false }),
      'an HTTPS answer',
      30_000,
    );
    expect(answer.status).toBe(404);
    await until(
      async () => {
        const current = server.get('gateways.gateway.networking.k8s.io', 'default', 'edge')?.status as
          | { listeners?: { name: string; conditions: { type: string; status: string }[] }[] }
          | undefined;
        const https = current?.listeners?.find((l) => l.name === 'https');
        return https?.conditions.find((c) => c.type === 'ResolvedRefs')?.status === 'True' ? true : undefined;
      },
      'ResolvedRefs=True on the https listener',
      10_000,
    );
    const dumped = await dump();
    expect(dumped).toContain('shop.example.com');
    for (const text of [dumped, output]) {
      expect(text).not.toContain(keyBody);
      expect(text).not.toContain(Buffer.from(cert.key).toString('base64').slice(0, 40));
    }
  }, 60_000);
});
