import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type EchoServer, startEchoServer } from '../../src/demo/echo/echo-server.ts';
import type { Condition } from '../../src/snapshot/resources.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { type KubeApiServer, startKubeApiServer } from '../support/kube-api-server/index.ts';
import { gateway, gatewayClass, httpRoute, service, serviceSlice, yamlDocs } from '../support/manifests.ts';

/**
 * Listeners tell the truth (issue 42): a port that cannot be bound is not reported as served, readiness waits for
 * it, it is tried again until it binds; and no listener answers before the first complete routing table.
 */
const NS = 'shop';
const HOST = 'shop.example.com';

interface Dump {
  readonly statuses: Record<
    string,
    {
      status: {
        conditions: Condition[];
        listeners: { name: string; conditions: Condition[] }[];
      };
    }
  >;
  readonly problems: string[];
}

function hold(port: number): Promise<Server> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

function release(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

const programmed = (conditions: readonly Condition[]): Condition | undefined =>
  conditions.find((c) => c.type === 'Programmed');

/** The answer to one GET, or the connection error's code (ECONNREFUSED before anything listens). */
async function probe(port: number): Promise<string> {
  try {
    const res = await request(`http://127.0.0.1:${port}/`, { headers: { host: HOST }, headersTimeout: 5000 });
    const body = await res.body.text();
    return `${res.statusCode} ${body}`;
  } catch (error) {
    const code = (error as { code?: string }).code;
    return code ?? String(error);
  }
}

describe('a listener whose port cannot be bound', () => {
  let gw: GatewayProcess | undefined;
  let echo: EchoServer | undefined;
  const blockers: Server[] = [];

  afterEach(async () => {
    await gw?.stop();
    await echo?.close();
    await Promise.all(blockers.filter((b) => b.listening).map(release));
  });

  it('is Programmed=False (PortUnavailable), a problem and not ready while held; bound, True and serving once freed', async () => {
    echo = await startEchoServer({
      host: '127.0.0.1',
      port: 0,
      identity: { namespace: NS, service: 'web', pod: 'web-a', cluster: 'local', zone: 'z1' },
    });
    const httpPort = await freePort();
    const tlsPort = await freePort();
    const eastWestPort = await freePort();
    blockers.push(await hold(httpPort), await hold(tlsPort), await hold(eastWestPort));
    gw = await startGateway({
      manifests: {
        'gateway.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [
            { name: 'http', protocol: 'HTTP', port: httpPort },
            { name: 'tls', protocol: 'TLS', port: tlsPort, tls: { mode: 'Passthrough' } },
          ]),
          service('web', NS),
          serviceSlice('web-a', 'web', NS, { port: echo.port, pod: 'web-a' }),
          httpRoute('web', NS, {
            parentRefs: [{ name: 'edge' }],
            hostnames: [HOST],
            rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
          }),
        ),
      },
      args: ['--east-west-port', String(eastWestPort), '--listener-bind-retry-max-ms', '300'],
      waitFor: 'admin',
      startTimeoutMs: 60_000,
    });
    const running = gw;
    const dump = async (): Promise<Dump> => JSON.parse((await running.adminGet('/config_dump')).body) as Dump;

    const held = await eventually(async () => {
      const d = await dump();
      const gatewayStatus = d.statuses[`Gateway/${NS}/edge`]?.status;
      expect(gatewayStatus).toBeDefined();
      expect(programmed(gatewayStatus?.listeners[0]?.conditions ?? [])?.status).toBe('False');
      return d;
    }, 20_000);
    const status = held.statuses[`Gateway/${NS}/edge`]?.status;
    const listenerCondition = programmed(status?.listeners[0]?.conditions ?? []);
    expect(listenerCondition?.reason).toBe('PortUnavailable');
    expect(listenerCondition?.message).toContain('EADDRINUSE');
    expect(listenerCondition?.message).toContain(`127.0.0.1:${httpPort}`);
    expect(programmed(status?.conditions ?? [])).toMatchObject({
      status: 'False',
      reason: 'PortUnavailable',
    });
    expect(held.problems).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^error: listener port ${httpPort} at 127\\.0\\.0\\.1:${httpPort} \\(${NS}/edge/http\\) cannot be bound: .*EADDRINUSE`,
        ),
      ),
    );
    expect(held.problems).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^error: east-west listener 127\\.0\\.0\\.1:${eastWestPort} cannot be bound: .*EADDRINUSE`,
        ),
      ),
    );
    expect(held.problems).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^error: TLS listener port ${tlsPort} at 127\\.0\\.0\\.1:${tlsPort} \\(${NS}/edge/tls\\) cannot be bound: .*EADDRINUSE`,
        ),
      ),
    );
    expect(programmed(status?.listeners[1]?.conditions ?? [])).toMatchObject({
      status: 'False',
      reason: 'PortUnavailable',
    });
    const notReady = await running.adminGet('/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body).toContain(
      `listener port ${httpPort} not bound at 127.0.0.1:${httpPort}: EADDRINUSE`,
    );
    expect(notReady.body).toContain(`east-west listener not bound at 127.0.0.1:${eastWestPort}: EADDRINUSE`);
    const metrics = (await running.adminGet('/metrics')).body;
    expect(metrics).toContain('clusterset_gateway_listeners{kind="http",state="unbound"} 1');
    expect(metrics).toContain('clusterset_gateway_listeners{kind="tls",state="unbound"} 1');
    expect(metrics).toContain('clusterset_gateway_listeners{kind="east-west",state="unbound"} 1');
    expect(metrics).toMatch(
      /clusterset_gateway_listener_bind_failures_total\{kind="http",code="EADDRINUSE"\} \d+/,
    );

    await Promise.all(blockers.map(release));
    await eventually(async () => {
      expect((await running.adminGet('/readyz')).status).toBe(200);
    }, 10_000);
    const freed = await dump();
    const freedStatus = freed.statuses[`Gateway/${NS}/edge`]?.status;
    expect(programmed(freedStatus?.listeners[0]?.conditions ?? [])).toMatchObject({
      status: 'True',
      reason: 'Programmed',
    });
    expect(programmed(freedStatus?.listeners[1]?.conditions ?? [])?.status).toBe('True');
    expect(programmed(freedStatus?.conditions ?? [])?.status).toBe('True');
    expect(freed.problems.filter((p) => p.includes('cannot be bound'))).toEqual([]);
    expect(await probe(httpPort)).toMatch(/^200 /);
    const after = (await running.adminGet('/metrics')).body;
    expect(after).toContain('clusterset_gateway_listeners{kind="http",state="bound"} 1');
    expect(after).toContain('clusterset_gateway_listeners{kind="http",state="unbound"} 0');
    expect(after).toContain('clusterset_gateway_listeners{kind="tls",state="bound"} 1');
    expect(after).toContain('clusterset_gateway_listeners{kind="east-west",state="bound"} 1');
  }, 120_000);
});

function podAddress(): string {
  // A member API server refuses loopback endpoint addresses, as kube-apiserver does.
  for (const list of Object.values(networkInterfaces())) {
    const found = list?.find((a) => a.family === 'IPv4' && !a.internal);
    if (found) return found.address;
  }
  throw new Error('this test needs a non-loopback IPv4 address for its pods');
}

describe('start-up', () => {
  let gw: GatewayProcess | undefined;
  let member: KubeApiServer | undefined;
  let pod: EchoServer | undefined;
  const kubeconfigs = mkdtempSync(join(tmpdir(), 'csg-startup-'));

  afterEach(async () => {
    await gw?.stop();
    await member?.stop();
    await pod?.close();
    rmSync(kubeconfigs, { recursive: true, force: true });
  });

  it('no listener answers before the first complete routing table: refused, then served, never a 5xx', async () => {
    const address = podAddress();
    pod = await startEchoServer({
      host: address,
      port: 0,
      identity: { namespace: NS, service: 'web', pod: 'web-east', cluster: 'east', zone: 'east-a' },
    });
    member = await startKubeApiServer({ bookmarkIntervalMs: 200 });
    member.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    member.create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: NS },
      spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
    });
    member.create({
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name: 'web', namespace: NS },
    });
    member.create({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web-1', namespace: NS, labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
      ports: [{ name: 'http', port: pod.port, protocol: 'TCP' }],
    });
    // A slow member: its lists are answered 1.5 s after the first one is asked, the window in which a listener
    // opened on the primary source's table alone would answer the route 500 (its ServiceImport not derived yet).
    let slow: Promise<void> | undefined;
    member.beforeRequest = ({ verb }) => {
      if (verb !== 'list') return;
      slow ??= new Promise((resolve) => setTimeout(resolve, 1500));
      return slow;
    };
    member.writeKubeconfig(join(kubeconfigs, 'east.yaml'));
    const port = await freePort();

    const answers: { atMs: number; answer: string }[] = [];
    const started = Date.now();
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const answer = await probe(port);
        if (answers.at(-1)?.answer !== answer) answers.push({ atMs: Date.now() - started, answer });
        if (answer.startsWith('200 ')) return;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    gw = await startGateway({
      manifests: {
        'gateway.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port }]),
          httpRoute('web', NS, {
            parentRefs: [{ name: 'edge' }],
            hostnames: [HOST],
            rules: [
              {
                backendRefs: [
                  { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web', port: 80 },
                ],
              },
            ],
          }),
        ),
      },
      args: ['--member-kubeconfigs', kubeconfigs],
      // The member client library alone takes seconds to load on a busy machine.
      startTimeoutMs: 60_000,
    });
    await eventually(async () => {
      expect(answers.at(-1)?.answer).toMatch(/^200 /);
    }, 15_000);
    polling = false;
    await poller;
    const first = answers.findIndex((a) => a.answer.startsWith('200 '));
    // Everything before the first answer is a refused connection: no 500 invalid backend, no 503, no reset.
    expect(answers.slice(0, first).map((a) => a.answer)).toEqual(['ECONNREFUSED']);
    expect(answers[first]?.answer).toContain('"pod": "web-east"');
  }, 120_000);
});
