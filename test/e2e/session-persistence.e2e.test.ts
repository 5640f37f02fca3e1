import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RestartablePod, startPod, stopPod } from '../support/echo.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import {
  gateway,
  gatewayClass,
  httpRoute,
  importedSlice,
  serviceImport,
  yamlDocs,
} from '../support/manifests.ts';

/**
 * Issue 46, checked from outside as a user would: session persistence (GEP-1619) with the ClusterSelectionPolicy's
 * `sessionPinning: Cluster`, through two real gateway processes sharing one --session-key-file, real echo backends
 * of three simulated clusters on 127.0.0.1, and a browser-like client keeping a cookie jar. East-1 is the gateway's
 * own cluster (tier local), west-1 the next tier; us-9 is outside the policy's tiers (its boundary).
 */
const NS = 'shop';

interface Pod extends RestartablePod {
  readonly pod: string;
  readonly cluster: string;
}

const PODS: Pod[] = [
  { pod: 'east-a', cluster: 'east-1', port: 0 },
  { pod: 'east-b', cluster: 'east-1', port: 0 },
  { pod: 'west-a', cluster: 'west-1', port: 0 },
  { pod: 'outside', cluster: 'us-9', port: 0 },
];
const byName = (name: string) => PODS.find((p) => p.pod === name)!;
const up = (p: Pod) =>
  startPod(p, { namespace: NS, service: 'web', pod: p.pod, cluster: p.cluster, zone: 'z' });

/** The browser's part: keeps what Set-Cookie says, sends it back on the next request. */
class CookieJar {
  readonly #cookies = new Map<string, string>();
  header(): string | undefined {
    if (this.#cookies.size === 0) return undefined;
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
  store(setCookie: string | string[] | undefined): void {
    for (const line of setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [setCookie]) {
      const pair = line.split(';')[0]!;
      const at = pair.indexOf('=');
      this.#cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
  }
  get(name: string): string | undefined {
    return this.#cookies.get(name);
  }
  set(name: string, value: string): void {
    this.#cookies.set(name, value);
  }
}

describe('session persistence across clusters', () => {
  const gateways: GatewayProcess[] = [];
  const ports: number[] = [];
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 4 });

  function manifests(port: number): string {
    return yamlDocs(
      gatewayClass(),
      gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port }]),
      serviceImport('web', NS),
      httpRoute('web', NS, {
        parentRefs: [{ name: 'edge' }],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/cart' } }],
            backendRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web', port: 80 }],
            sessionPersistence: { sessionName: 'cart', absoluteTimeout: '1h' },
          },
          {
            matches: [{ path: { type: 'PathPrefix', value: '/api' } }],
            backendRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web', port: 80 }],
            sessionPersistence: { type: 'Header', sessionName: 'x-shard' },
          },
        ],
      }),
      {
        apiVersion: 'policy.clusterset-gateway.io/v1alpha1',
        kind: 'ClusterSelectionPolicy',
        metadata: { name: 'web-tiers', namespace: NS },
        spec: {
          targetRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web' }],
          tiers: [
            { name: 'local', sameCluster: true },
            { name: 'west', clusters: ['west-1'] },
          ],
          sessionPinning: 'Cluster',
        },
      },
      ...PODS.map((pod) =>
        importedSlice(`web-${pod.pod}`, 'web', NS, pod.cluster, { port: pod.port, zone: 'z', pod: pod.pod }),
      ),
    );
  }

  beforeAll(async () => {
    for (const pod of PODS) await up(pod);
    const dir = mkdtempSync(join(tmpdir(), 'csgw-session-key-'));
    const keyFile = join(dir, 'session.key');
    writeFileSync(keyFile, `${'k'.repeat(24)}-shared-by-both-replicas\n`);
    ports.push(await freePort(), await freePort());
    gateways.push(
      ...(await Promise.all(
        ports.map((port) =>
          startGateway({
            args: ['--cluster', 'east-1', '--session-key-file', keyFile, '--outlier-base-ejection-ms', '300'],
            manifests: { 'web.yaml': manifests(port) },
            startTimeoutMs: 60_000,
          }),
        ),
      )),
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await agent.close();
    await Promise.all(PODS.map(stopPod));
  });

  async function get(
    path: string,
    headers: Record<string, string> = {},
    gatewayIndex = 0,
  ): Promise<{
    status: number;
    pod: string | undefined;
    setCookie: string | string[] | undefined;
    shard?: string;
  }> {
    const response = await request(`http://127.0.0.1:${ports[gatewayIndex]}${path}`, {
      headers,
      dispatcher: agent,
    });
    const body = await response.body.text();
    const shard = response.headers['x-shard'];
    return {
      status: response.statusCode,
      pod: response.statusCode === 200 ? (JSON.parse(body) as { pod: string }).pod : undefined,
      setCookie: response.headers['set-cookie'],
      ...(typeof shard === 'string' ? { shard } : {}),
    };
  }

  async function browse(jar: CookieJar, gatewayIndex = 0) {
    const cookie = jar.header();
    const answer = await get('/cart', cookie === undefined ? {} : { cookie }, gatewayIndex);
    jar.store(answer.setCookie);
    return answer;
  }

  async function metric(name: string): Promise<string> {
    const response = await request(`http://127.0.0.1:${gateways[0]!.adminPort}/metrics`);
    const text = await response.body.text();
    return text
      .split('\n')
      .filter((line) => line.startsWith(name))
      .join('\n');
  }

  const jar = new CookieJar();
  let pinned = '';

  it('pins a browser to one endpoint for 1,000 requests, with one Set-Cookie', async () => {
    await eventually(async () => expect((await get('/cart')).status).toBe(200), 20_000);
    const first = await browse(jar);
    expect(first.status).toBe(200);
    expect(String(first.setCookie)).toMatch(/^cart=[A-Za-z0-9_-]+; Path=\/cart; HttpOnly$/);
    pinned = first.pod!;
    expect(['east-a', 'east-b']).toContain(pinned);
    const served = new Set<string>();
    let cookiesSet = 0;
    // Four tabs of one browser, 250 requests each, sharing the jar.
    const tab = async () => {
      for (let i = 0; i < 250; i++) {
        const answer = await browse(jar);
        served.add(`${answer.status} ${answer.pod}`);
        if (answer.setCookie !== undefined) cookiesSet++;
      }
    };
    await Promise.all([tab(), tab(), tab(), tab()]);
    expect([...served]).toEqual([`200 ${pinned}`]);
    expect(cookiesSet).toBe(0);
    // Without the cookie the gateway spreads requests over both local endpoints.
    const spread = new Set<string>();
    for (let i = 0; i < 60; i++) spread.add((await get('/cart')).pod!);
    expect(spread).toEqual(new Set(['east-a', 'east-b']));
  });

  it('is honoured by another gateway instance holding the same key file', async () => {
    for (let i = 0; i < 20; i++) {
      const answer = await browse(jar, 1);
      expect(answer.pod).toBe(pinned);
      expect(answer.setCookie).toBeUndefined();
    }
  });

  it('ignores forged, truncated and oversized cookies: a fresh pick and a new cookie, never an error', async () => {
    const value = jar.get('cart')!;
    const flipped = `${value.slice(0, 30)}${value[30] === 'A' ? 'B' : 'A'}${value.slice(31)}`;
    for (const bad of [flipped, value.slice(0, 20), 'x'.repeat(4000), 'not base64 at all!']) {
      const answer = await get('/cart', { cookie: `cart=${bad}` });
      expect(answer.status).toBe(200);
      expect(String(answer.setCookie)).toMatch(/^cart=/);
    }
    const ignored = await metric('clusterset_gateway_session_values_ignored_total');
    expect(ignored).toMatch(/reason="forged"\} [1-9]/);
    expect(ignored).toMatch(/reason="malformed"\} [1-9]/);
    expect(ignored).toMatch(/reason="oversized"\} [1-9]/);
  });

  it('keeps a Header session: the value comes back in the response header and pins the endpoint', async () => {
    const first = await get('/api');
    expect(first.shard).toMatch(/^[A-Za-z0-9_-]+$/);
    for (let i = 0; i < 50; i++) {
      const answer = await get('/api', { 'x-shard': first.shard! });
      expect(answer.pod).toBe(first.pod);
      expect(answer.shard).toBeUndefined();
    }
  });

  it('moves the session to the other endpoint of its cluster when its endpoint dies', async () => {
    await stopPod(byName(pinned));
    const answer = await browse(jar);
    expect(answer.status).toBe(200);
    const other = pinned === 'east-a' ? 'east-b' : 'east-a';
    expect(answer.pod).toBe(other);
    expect(answer.setCookie).toBeDefined();
    for (let i = 0; i < 50; i++) expect((await browse(jar)).pod).toBe(other);
    pinned = other;
    expect(await metric('clusterset_gateway_session_pins_total')).toMatch(/outcome="moved-endpoint"\} [1-9]/);
  });

  it('re-pins to the next tier when the cluster fails, stays there, and never crosses the boundary', async () => {
    await stopPod(byName(pinned));
    const answer = await browse(jar);
    expect(answer.status).toBe(200);
    expect(answer.pod).toBe('west-a');
    expect(answer.setCookie).toBeDefined();
    // The cluster comes back: the session stays where it was re-pinned, and the other replica agrees.
    await up(byName('east-a'));
    await up(byName('east-b'));
    for (let i = 0; i < 50; i++) expect((await browse(jar, i % 2)).pod).toBe('west-a');
    expect(await metric('clusterset_gateway_session_pins_total')).toMatch(/outcome="moved-cluster"\} [1-9]/);
    // Every cluster inside the tiers down: 503, never the cluster outside them.
    await stopPod(byName('east-a'));
    await stopPod(byName('east-b'));
    await stopPod(byName('west-a'));
    const answers = new Set<string>();
    for (let i = 0; i < 10; i++) {
      const last = await browse(jar);
      answers.add(`${last.status} ${last.pod ?? ''}`);
    }
    expect([...answers].some((a) => a.includes('outside'))).toBe(false);
    expect([...answers].every((a) => a.startsWith('5'))).toBe(true);
  });

  it('shows the session config per route in /config_dump, and no key', async () => {
    const response = await request(`http://127.0.0.1:${gateways[0]!.adminPort}/config_dump`);
    const dump = await response.body.text();
    expect(dump).toContain('"sessionPersistence"');
    expect(dump).toMatch(/"name": ?"cart"/);
    expect(dump).toMatch(/"sessionPinning": ?"Cluster"/);
    expect(dump).not.toContain('shared-by-both-replicas');
  });
});
