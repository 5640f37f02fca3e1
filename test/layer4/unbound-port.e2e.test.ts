import { createSocket, type Socket as DgramSocket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import type { Condition } from '../../src/snapshot/resources.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, yamlDocs } from '../support/manifests.ts';
import {
  freeUdpPort,
  greetingOf,
  layer4Route,
  openUdpClient,
  slice,
  startTcpBackend,
  startUdpBackend,
  stopTcpBackend,
  stopUdpBackend,
  type TcpBackend,
  type UdpBackend,
} from './layer4-fixtures.ts';

/**
 * A TCP or UDP listener whose port is held by another process: Programmed=False (PortUnavailable), a problem line,
 * not ready; tried again until it binds, then serving. The other listener serves meanwhile.
 */
const NS = 'held';

interface Dump {
  readonly statuses: Record<string, { status: { listeners: { name: string; conditions: Condition[] }[] } }>;
  readonly problems: string[];
}

describe('TCP and UDP listener ports that cannot be bound', () => {
  let gw: GatewayProcess | undefined;
  let tcpBackend: TcpBackend;
  let udpBackend: UdpBackend;
  let tcpHolder: Server | undefined;
  let udpHolder: DgramSocket | undefined;

  afterAll(async () => {
    await gw?.stop();
    tcpHolder?.close();
    udpHolder?.close();
    await stopTcpBackend(tcpBackend);
    await stopUdpBackend(udpBackend);
  });

  it('are PortUnavailable and a problem while held, and serve once freed', async () => {
    tcpBackend = await startTcpBackend('db');
    udpBackend = await startUdpBackend('dns');
    const [tcpPort, freeTcp, udpPort] = [await freePort(), await freePort(), await freeUdpPort()];
    tcpHolder = createServer();
    await new Promise<void>((r) => tcpHolder?.listen(tcpPort, '127.0.0.1', r));
    udpHolder = createSocket('udp4');
    await new Promise<void>((r) => udpHolder?.bind(udpPort, '127.0.0.1', r));
    const service = (name: string, protocol: string) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: NS },
      spec: { ports: [{ name: 'main', protocol, port: 9 }] },
    });
    gw = await startGateway({
      manifests: {
        'l4.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [
            { name: 'held-tcp', protocol: 'TCP', port: tcpPort },
            { name: 'free-tcp', protocol: 'TCP', port: freeTcp },
            { name: 'held-udp', protocol: 'UDP', port: udpPort },
          ]),
          service('db', 'TCP'),
          slice('db-1', { service: 'db', namespace: NS, port: tcpBackend.port }),
          service('dns', 'UDP'),
          slice('dns-1', { service: 'dns', namespace: NS, port: udpBackend.port, protocol: 'UDP' }),
          layer4Route('TCPRoute', 'db', NS, {
            parentRefs: [
              { name: 'edge', sectionName: 'held-tcp' },
              { name: 'edge', sectionName: 'free-tcp' },
            ],
            rules: [{ backendRefs: [{ name: 'db', port: 9 }] }],
          }),
          layer4Route('UDPRoute', 'dns', NS, {
            parentRefs: [{ name: 'edge', sectionName: 'held-udp' }],
            rules: [{ backendRefs: [{ name: 'dns', port: 9 }] }],
          }),
        ),
      },
      args: ['--listener-bind-retry-max-ms', '300'],
      waitFor: 'admin',
      startTimeoutMs: 60_000,
    });
    const running = gw;
    const dump = async () => JSON.parse((await running.adminGet('/config_dump')).body) as Dump;
    const programmed = (d: Dump, name: string) =>
      d.statuses[`Gateway/${NS}/edge`]?.status.listeners
        .find((l) => l.name === name)
        ?.conditions.find((c) => c.type === 'Programmed');

    const held = await eventually(async () => {
      const d = await dump();
      expect(programmed(d, 'held-tcp')).toMatchObject({ status: 'False', reason: 'PortUnavailable' });
      expect(programmed(d, 'held-udp')).toMatchObject({ status: 'False', reason: 'PortUnavailable' });
      return d;
    }, 15_000);
    expect(held.problems.some((p) => p.includes(`TCP listener port ${tcpPort}`))).toBe(true);
    expect(held.problems.some((p) => p.includes(`UDP listener port ${udpPort}`))).toBe(true);
    expect(programmed(held, 'free-tcp')?.status).toBe('True');
    expect((await running.adminGet('/readyz')).status).not.toBe(200);
    // The free listener serves meanwhile.
    expect(await greetingOf(freeTcp)).toBe('db');

    await new Promise<void>((r) => tcpHolder?.close(() => r()));
    await new Promise<void>((r) => udpHolder?.close(() => r()));
    tcpHolder = undefined;
    udpHolder = undefined;
    await eventually(async () => expect((await running.adminGet('/readyz')).status).toBe(200), 15_000);
    expect(await greetingOf(tcpPort)).toBe('db');
    const client = await openUdpClient(udpPort);
    await eventually(async () => expect(await client.exchange('q', 300)).toBe('dns:q'), 10_000);
    client.close();
  }, 90_000);
});
