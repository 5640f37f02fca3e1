import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, importedSlice, serviceImport, yamlDocs } from '../support/manifests.ts';
import { makeTrustDomain, signedCertificate } from '../support/network-certs.ts';
import { counterValue, httpThrough, openPeer, openStream, type PeerTls } from './peer-client.ts';

/**
 * The network gateway's own certificate from a kubernetes.io/tls Secret and its trust bundle from a ConfigMap
 * (`--network-tls-secret`, `--network-trust-bundle-configmap`), read from the manifests folder as the Kubernetes
 * source would watch them: rotated without dropping an open tunnel, a bad set refused with the last good one
 * kept, expiry reported (metric, log line, /config_dump problem and the Gateway condition NetworkCertificateValid),
 * and the key never shown.
 */
const WEB = 'web.demo.svc.clusterset.local:80';
const SECRET = 'Secret net/west-identity';

function identitySecret(cert: string, key: string): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name: 'west-identity', namespace: 'net' },
    data: {
      'tls.crt': Buffer.from(cert).toString('base64'),
      'tls.key': Buffer.from(key).toString('base64'),
    },
  };
}

function bundle(ca: string): unknown {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'network-trust', namespace: 'net' },
    data: { 'ca.crt': ca },
  };
}

/** The body of a PEM key, a line of which must never be shown anywhere. */
function keyLines(pem: string): string[] {
  const lines = pem.split('\n').filter((line) => line.length > 20 && !line.startsWith('-----'));
  // And the Secret's own form of it.
  return [...lines, Buffer.from(pem).toString('base64').slice(0, 48)];
}

describe('network certificates from a Secret', () => {
  let dir: string;
  let gw: GatewayProcess;
  let port: number;
  let pods: RunningEcho[];
  let east: PeerTls;
  let ca: string;
  const shownKeys: string[] = [];

  const dump = async () => JSON.parse((await gw.adminGet('/config_dump')).body);
  const certificateCondition = async () =>
    ((await dump()).statuses['Gateway/demo/edge']?.status.conditions ?? []).find(
      (c: { type: string }) => c.type === 'NetworkCertificateValid',
    );
  const serialOf = (session: ReturnType<typeof openPeer>) =>
    (session.socket as TLSSocket).getPeerCertificate().serialNumber;
  const connectedSerial = async (): Promise<string> => {
    const session = openPeer(port, east);
    try {
      expect((await openStream(session, WEB)).status).toBe(200);
      return serialOf(session);
    } finally {
      session.destroy();
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csgw-netcert-'));
    makeTrustDomain(dir, 'demo.local', ['west', 'east']);
    ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
    east = {
      cert: readFileSync(join(dir, 'east.crt'), 'utf8'),
      key: readFileSync(join(dir, 'east.key'), 'utf8'),
      ca,
    };
    const westKey = readFileSync(join(dir, 'west.key'), 'utf8');
    shownKeys.push(westKey);
    pods = await startEchoes([{ pod: 'west-pod', cluster: 'west' }], { namespace: 'demo', service: 'web' });
    port = await freePort();
    const httpPort = await freePort();
    gw = await startGateway({
      args: [
        '--cluster',
        'west',
        '--network',
        'net-west',
        '--network-gateway-port',
        String(port),
        '--network-tls-secret',
        'net/west-identity',
        '--network-trust-bundle-configmap',
        'net/network-trust',
        '--log-level',
        'info',
      ],
      manifests: {
        'gateway.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', 'demo', [{ name: 'http', protocol: 'HTTP', port: httpPort }]),
        ),
        'mc.yaml': yamlDocs(
          serviceImport('web', 'demo'),
          importedSlice('web-west', 'web', 'demo', 'west', {
            port: (pods[0] as RunningEcho).port,
            pod: 'west-pod',
          }),
        ),
        'identity.yaml': yamlDocs(
          identitySecret(readFileSync(join(dir, 'west.crt'), 'utf8'), westKey),
          bundle(ca),
        ),
      },
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await closeAll(pods ?? []);
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves with the Secret identity and says where it came from and when it ends', async () => {
    const session = openPeer(port, east);
    const answer = await eventually(async () => {
      const a = await openStream(session, WEB);
      expect(a.status).toBe(200);
      return a;
    }, 10_000);
    const text = await httpThrough(answer.stream, 'web.demo.svc.clusterset.local');
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).pod).toBe('west-pod');
    session.destroy();
    const doc = await dump();
    expect(doc.networks.identity).toMatchObject({ source: SECRET, id: 'spiffe://demo.local/cluster/west' });
    expect(doc.networks.identity.expiresInSeconds).toBeGreaterThan(29 * 86_400);
    expect(doc.networks.local).toEqual({ cluster: 'west', network: 'net-west' });
    expect(await certificateCondition()).toMatchObject({
      status: 'True',
      reason: 'Valid',
      message: expect.stringMatching(
        /^network certificate spiffe:\/\/demo\.local\/cluster\/west \(Secret net\/west-identity\) is valid until \d{4}-/,
      ),
    });
    expect(doc.problems.filter((p: string) => p.includes('network certificate'))).toEqual([]);
    const metrics = (await gw.adminGet('/metrics')).body;
    const left = counterValue(
      metrics,
      'clusterset_gateway_network_certificate_expiry_seconds',
      `source="${SECRET}"`,
    );
    expect(left).toBeGreaterThan(29 * 86_400);
  });

  it('takes a rotated Secret for new connections; an open tunnel keeps working; expiry is reported', async () => {
    const before = openPeer(port, east);
    const tunnel = await openStream(before, WEB);
    expect(tunnel.status).toBe(200);
    const oldSerial = serialOf(before);
    // Rotated to a certificate that ends in two days: within the 7-day default warning.
    const renewed = signedCertificate(dir, 'west-2', 'spiffe://demo.local/cluster/west', 2);
    shownKeys.push(renewed.key);
    await gw.writeManifest('identity.yaml', yamlDocs(identitySecret(renewed.cert, renewed.key), bundle(ca)));
    await eventually(async () => expect(await connectedSerial()).not.toBe(oldSerial), 10_000);
    const text = await httpThrough(tunnel.stream, 'web.demo.svc.clusterset.local');
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    before.destroy();
    const doc = await dump();
    expect(doc.networks.identity.expiresInSeconds).toBeLessThan(3 * 86_400);
    expect(doc.problems).toContainEqual(
      expect.stringMatching(
        /^network certificate spiffe:\/\/demo\.local\/cluster\/west \(Secret net\/west-identity\) expires at /,
      ),
    );
    await eventually(async () => expect(gw.output()).toMatch(/"level":40[^\n]*expires at/));
    // Every Gateway this controller programs says so, in a condition an operator reads.
    const condition = await certificateCondition();
    expect(condition).toMatchObject({ status: 'False', reason: 'Expiring' });
    expect(condition.message).toMatch(
      /^network certificate spiffe:\/\/demo\.local\/cluster\/west \(Secret net\/west-identity\) expires at \S+, within the 168h warning window$/,
    );
    const [, when] = /expires at (\S+),/.exec(condition.message) ?? [];
    expect(when).toBe(doc.networks.identity.notAfter);
  });

  it('keeps the last good set when the Secret holds a key of another certificate, and says so', async () => {
    const good = await connectedSerial();
    const stray = signedCertificate(dir, 'west-3', 'spiffe://demo.local/cluster/west', 30);
    shownKeys.push(stray.key);
    // The new certificate with the key of another one: unusable.
    const eastKey = readFileSync(join(dir, 'east.key'), 'utf8');
    await gw.writeManifest('identity.yaml', yamlDocs(identitySecret(stray.cert, eastKey), bundle(ca)));
    await eventually(async () =>
      expect((await dump()).problems).toContainEqual(
        expect.stringContaining(
          'network certificate not (re)loaded: Secret net/west-identity tls.key does not match Secret net/west-identity tls.crt',
        ),
      ),
    );
    expect(await connectedSerial()).toBe(good);
    // Missing altogether: the same, the last good set serves.
    await gw.writeManifest('identity.yaml', yamlDocs(bundle(ca)));
    await eventually(async () =>
      expect((await dump()).problems).toContainEqual(
        expect.stringContaining('network identity: Secret net/west-identity not found'),
      ),
    );
    expect(await connectedSerial()).toBe(good);
  });

  it('never shows a key in /config_dump or the log', async () => {
    const good = signedCertificate(dir, 'west-4', 'spiffe://demo.local/cluster/west', 30);
    shownKeys.push(good.key);
    await gw.writeManifest('identity.yaml', yamlDocs(identitySecret(good.cert, good.key), bundle(ca)));
    await eventually(async () =>
      expect((await dump()).problems.filter((p: string) => p.includes('network'))).toEqual([]),
    );
    const body = (await gw.adminGet('/config_dump')).body;
    const output = gw.output();
    expect(body).not.toContain('PRIVATE KEY');
    expect(output).not.toContain('PRIVATE KEY');
    for (const key of shownKeys) {
      for (const line of keyLines(key)) {
        expect(body).not.toContain(line);
        expect(output).not.toContain(line);
      }
    }
    // The identity in the routing table is there, redacted.
    expect(JSON.parse(body).routeTable.networkIdentity.keyPem).toMatch(/^<redacted, \d+ bytes>$/);
  });
});

/**
 * `--workers 2`: each worker loads the identity itself; the primary, which writes statuses, lays the worst of
 * the workers' reports on every Gateway, and follows a rotation and a refused set as the single process does.
 */
describe('network certificates from a Secret, with --workers 2', () => {
  let dir: string;
  let gw: GatewayProcess;
  let pods: RunningEcho[];
  let ca: string;

  const condition = async () =>
    (
      JSON.parse((await gw.adminGet('/config_dump')).body).statuses['Gateway/demo/edge']?.status.conditions ??
      []
    ).find((c: { type: string }) => c.type === 'NetworkCertificateValid');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csgw-netcert-workers-'));
    makeTrustDomain(dir, 'demo.local', ['west']);
    ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
    pods = await startEchoes([{ pod: 'west-pod', cluster: 'west' }], { namespace: 'demo', service: 'web' });
    gw = await startGateway({
      args: [
        '--workers',
        '2',
        '--cluster',
        'west',
        '--network',
        'net-west',
        '--network-gateway-port',
        String(await freePort()),
        '--network-tls-secret',
        'net/west-identity',
        '--network-trust-bundle-configmap',
        'net/network-trust',
      ],
      manifests: {
        'gateway.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', 'demo', [{ name: 'http', protocol: 'HTTP', port: await freePort() }]),
        ),
        'identity.yaml': yamlDocs(
          identitySecret(
            readFileSync(join(dir, 'west.crt'), 'utf8'),
            readFileSync(join(dir, 'west.key'), 'utf8'),
          ),
          bundle(ca),
        ),
      },
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await closeAll(pods ?? []);
    rmSync(dir, { recursive: true, force: true });
  });

  it('sets NetworkCertificateValid from the workers, and follows a rotation to an expiring certificate', async () => {
    await eventually(async () =>
      expect(await condition()).toMatchObject({
        status: 'True',
        reason: 'Valid',
        message: expect.stringContaining(
          'spiffe://demo.local/cluster/west (Secret net/west-identity) is valid until',
        ),
      }),
    );
    const renewed = signedCertificate(dir, 'west-2', 'spiffe://demo.local/cluster/west', 2);
    await gw.writeManifest('identity.yaml', yamlDocs(identitySecret(renewed.cert, renewed.key), bundle(ca)));
    await eventually(
      async () => expect(await condition()).toMatchObject({ status: 'False', reason: 'Expiring' }),
      10_000,
    );
  });

  it('lists a refused set among the problems while the last good certificate stays in force', async () => {
    const stray = signedCertificate(dir, 'west-3', 'spiffe://demo.local/cluster/west', 30);
    await gw.writeManifest(
      'identity.yaml',
      yamlDocs(identitySecret(stray.cert, readFileSync(join(dir, 'west.key'), 'utf8')), bundle(ca)),
    );
    await eventually(async () =>
      expect(JSON.parse((await gw.adminGet('/config_dump')).body).problems).toContainEqual(
        expect.stringContaining('tls.key does not match Secret net/west-identity tls.crt'),
      ),
    );
    expect(await condition()).toMatchObject({ status: 'False', reason: 'Expiring' });
  });
});
