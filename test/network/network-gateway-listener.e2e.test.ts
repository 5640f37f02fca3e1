import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { importedSlice, serviceImport, yamlDocs } from '../support/manifests.ts';
import { makeTrustDomain, signedCertificate } from '../support/network-certs.ts';
import { onNetwork } from './network-fixture.ts';
import { counterValue, httpThrough, openPeer, openStream, type PeerTls, wentAway } from './peer-client.ts';

/**
 * The network gateway listener of cluster west (issue 41): mutual TLS with SPIFFE cluster IDs, HTTP/2 CONNECT
 * to an exported service only, relayed to west's own pods; every bad peer and request refused and counted.
 */
const WEB = 'web.demo.svc.clusterset.local:80';
const REFUSED = 'clusterset_gateway_network_gateway_refused_total';
const HANDSHAKE = 'clusterset_gateway_network_gateway_handshake_failures_total';

describe('network gateway listener', () => {
  let dir: string;
  let gw: GatewayProcess;
  let port: number;
  let pods: RunningEcho[];
  let ca: string;
  let east: PeerTls;

  const metric = async (name: string, reason: string) =>
    counterValue((await gw.adminGet('/metrics')).body, name, `reason="${reason}"`);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csgw-netgw-'));
    makeTrustDomain(dir, 'demo.local', ['west', 'east', 'north']);
    ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
    const peer = (cluster: string): PeerTls => ({
      cert: readFileSync(join(dir, `${cluster}.crt`), 'utf8'),
      key: readFileSync(join(dir, `${cluster}.key`), 'utf8'),
      ca,
    });
    east = peer('east');
    pods = await startEchoes(
      [
        { pod: 'west-pod', cluster: 'west' },
        { pod: 'east-pod', cluster: 'east' },
      ],
      { namespace: 'demo', service: 'web' },
    );
    const [westPod, eastPod] = pods as [RunningEcho, RunningEcho];
    port = await freePort();
    gw = await startGateway({
      args: [
        ...onNetwork(dir, 'west', 'net-west'),
        '--network-gateway-port',
        String(port),
        '--network-allowed-clusters',
        'east,south',
        '--network-max-streams',
        '4',
        '--network-handshake-timeout-ms',
        '500',
      ],
      manifests: {
        'mc.yaml': yamlDocs(
          serviceImport('web', 'demo'),
          // Only east's pod: west does not export it, so its gateway must not serve it.
          serviceImport('ledger', 'demo'),
          importedSlice('web-west', 'web', 'demo', 'west', { port: westPod.port, pod: 'west-pod' }),
          importedSlice('web-east', 'web', 'demo', 'east', { port: eastPod.port, pod: 'east-pod' }),
          importedSlice('ledger-east', 'ledger', 'demo', 'east', { port: eastPod.port, pod: 'east-pod' }),
        ),
      },
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await closeAll(pods ?? []);
    rmSync(dir, { recursive: true, force: true });
  });

  it("relays CONNECT to an exported service to this cluster's own pods, never another cluster's", async () => {
    const session = openPeer(port, east);
    for (let i = 0; i < 6; i++) {
      const answer = await openStream(session, WEB);
      expect(answer.status).toBe(200);
      const text = await httpThrough(answer.stream, 'web.demo.svc.clusterset.local');
      expect(text).toMatch(/^HTTP\/1\.1 200/);
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).pod).toBe('west-pod');
    }
    session.close();
  });

  it('refuses a non-exported service (404), an IP (400), a bad name (400) and a plain request (405)', async () => {
    const session = openPeer(port, east);
    const cases = [
      { authority: 'ledger.demo.svc.clusterset.local:80', status: 404, reason: 'not-exported' },
      { authority: 'web.demo.svc.clusterset.local:81', status: 404, reason: 'not-exported' },
      { authority: '127.0.0.1:80', status: 400, reason: 'ip-authority' },
      { authority: '[::1]:80', status: 400, reason: 'ip-authority' },
      { authority: 'web.demo.svc.cluster.local:80', status: 400, reason: 'bad-authority' },
      { authority: 'web.demo.svc.clusterset.local', status: 400, reason: 'bad-authority' },
    ];
    for (const c of cases) {
      const before = await metric(REFUSED, c.reason);
      const answer = await openStream(session, c.authority);
      expect([c.authority, answer.status, answer.refusal]).toEqual([c.authority, c.status, c.reason]);
      await eventually(async () => expect(await metric(REFUSED, c.reason)).toBe(before + 1));
    }
    const get = await openStream(session, WEB, 'GET');
    expect([get.status, get.refusal]).toEqual([405, 'not-connect']);
    session.close();
  });

  it('closes connections without a valid client certificate, each reason counted', async () => {
    const expired = signedCertificate(dir, 'east-expired', 'spiffe://demo.local/cluster/east', -1);
    const foreignDir = join(dir, 'foreign');
    makeTrustDomain(foreignDir, 'demo.local', ['east']);
    const foreign = {
      cert: readFileSync(join(foreignDir, 'east.crt'), 'utf8'),
      key: readFileSync(join(foreignDir, 'east.key'), 'utf8'),
    };
    const cases: { tls: PeerTls; reason: string }[] = [
      { tls: { ca }, reason: 'no-client-certificate' },
      { tls: { ...expired, ca }, reason: 'certificate-expired' },
      { tls: { ...foreign, ca }, reason: 'certificate-untrusted' },
    ];
    for (const c of cases) {
      const before = await metric(HANDSHAKE, c.reason);
      const session = openPeer(port, c.tls);
      const answer = await openStream(session, WEB);
      expect([c.reason, answer.status]).toEqual([c.reason, undefined]);
      await eventually(async () => expect(await metric(HANDSHAKE, c.reason)).toBe(before + 1));
      session.destroy();
    }
  });

  it('answers 403 to peers of another trust domain or not in the allowed list', async () => {
    const otherDomain = signedCertificate(dir, 'east-other-domain', 'spiffe://other.local/cluster/east', 30);
    const noId = signedCertificate(dir, 'east-no-id', 'https://east.example/', 30);
    const cases: { tls: PeerTls; reason: string }[] = [
      { tls: { ...otherDomain, ca }, reason: 'trust-domain' },
      {
        tls: {
          cert: readFileSync(join(dir, 'north.crt'), 'utf8'),
          key: readFileSync(join(dir, 'north.key'), 'utf8'),
          ca,
        },
        reason: 'cluster-not-allowed',
      },
      { tls: { ...noId, ca }, reason: 'no-spiffe-id' },
    ];
    for (const c of cases) {
      const before = await metric(REFUSED, c.reason);
      const session = openPeer(port, c.tls);
      const answer = await openStream(session, WEB);
      expect([answer.status, answer.refusal]).toEqual([403, c.reason]);
      await eventually(async () => expect(wentAway(session) || session.destroyed).toBe(true));
      session.destroy();
      await eventually(async () => expect(await metric(REFUSED, c.reason)).toBe(before + 1));
    }
  });

  it('refuses plaintext and a handshake that never finishes, and keeps serving', async () => {
    const total = async () =>
      (await gw.adminGet('/metrics')).body
        .split('\n')
        .filter((l) => l.startsWith(`${HANDSHAKE}{`))
        .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    const totalBefore = await total();
    // A health checker's TCP probe (connect, then close) is not a refusal worth counting.
    await new Promise<void>((resolve) => {
      const probe = netConnect(port, '127.0.0.1', () => probe.end());
      probe.on('error', () => {});
      probe.once('close', () => resolve());
    });
    const before = await metric(HANDSHAKE, 'tls handshake not tls');
    const plain = await new Promise<string>((resolve) => {
      const socket = netConnect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
      let got = '';
      socket.on('data', (d) => {
        got += d.toString('latin1');
      });
      socket.on('error', () => {});
      socket.once('close', () => resolve(got));
    });
    expect(plain).not.toContain('HTTP/1.1 200');
    await eventually(async () => expect(await metric(HANDSHAKE, 'tls handshake not tls')).toBe(before + 1));
    expect(await total()).toBe(totalBefore + 1);

    const slowBefore = await metric(HANDSHAKE, 'tls handshake timeout');
    const closed = await new Promise<boolean>((resolve) => {
      const socket = netConnect(port, '127.0.0.1', () => socket.write(Buffer.from([0x16, 0x03, 0x01])));
      socket.on('error', () => {});
      socket.once('close', () => resolve(true));
    });
    expect(closed).toBe(true);
    await eventually(async () =>
      expect(await metric(HANDSHAKE, 'tls handshake timeout')).toBe(slowBefore + 1),
    );

    const session = openPeer(port, east);
    expect((await openStream(session, WEB)).status).toBe(200);
    session.destroy();
  });

  it('holds a connection to --network-max-streams open tunnels; the rest are refused', async () => {
    const session = openPeer(port, east);
    const answers = await Promise.all(Array.from({ length: 12 }, () => openStream(session, WEB)));
    const open = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    expect(open.length).toBeLessThanOrEqual(4);
    expect(open.length).toBeGreaterThan(0);
    expect(refused.length).toBe(12 - open.length);
    // Closing the open ones makes room again on the same connection.
    for (const a of open) a.stream.close();
    await eventually(async () => expect((await openStream(session, WEB)).status).toBe(200));
    session.destroy();
  });

  it('takes a new certificate from its files without dropping a tunnel that is open', async () => {
    const serialOf = (session: ReturnType<typeof openPeer>) =>
      (session.socket as TLSSocket).getPeerCertificate().serialNumber;
    const before = openPeer(port, east);
    const tunnel = await openStream(before, WEB);
    expect(tunnel.status).toBe(200);
    const oldSerial = serialOf(before);
    // What cert-manager or a mounted Secret does: new files for the same identity.
    signedCertificate(dir, 'west', 'spiffe://demo.local/cluster/west', 30);
    await eventually(async () => {
      const after = openPeer(port, east);
      try {
        expect((await openStream(after, WEB)).status).toBe(200);
        expect(serialOf(after)).not.toBe(oldSerial);
      } finally {
        after.destroy();
      }
    }, 10_000);
    const text = await httpThrough(tunnel.stream, 'web.demo.svc.clusterset.local');
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).pod).toBe('west-pod');
    before.destroy();
  });
});
