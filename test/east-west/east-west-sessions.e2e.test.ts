import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
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
 * Session persistence east-west (sidecarless, `<svc>.<ns>.svc.clusterset.local`): an XBackendTrafficPolicy's
 * Cookie session on a ServiceImport reached by its name alone, and a GAMMA HTTPRoute's Header session on another
 * ServiceImport. A caller that sends the value back stays on its pod; one that does not is spread.
 */
const NS = 'demo';
const POLICY_SESSION = 'api-session';
const ROUTE_SESSION = 'x-cart-session';

describe('session persistence through the east-west listener', () => {
  let echoes: RunningEcho[];
  let gw: GatewayProcess;
  let eastWest: number;
  const agent = new Agent();

  beforeAll(async () => {
    echoes = await startEchoes(['api-1', 'api-2', 'cart-1', 'cart-2'], { namespace: NS });
    eastWest = await freePort();
    const slices = echoes.map((echo, i) =>
      importedSlice(
        echo.identity.pod,
        echo.identity.pod.split('-')[0]!,
        NS,
        i % 2 === 0 ? 'east-1' : 'west-1',
        {
          port: echo.port,
          pod: echo.identity.pod,
          zone: 'z',
        },
      ),
    );
    gw = await startGateway({
      args: ['--east-west-port', String(eastWest), '--cluster', 'east-1', '--zone', 'z'],
      manifests: {
        'mesh.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port: await freePort() }]),
          // No trafficDistribution: both clusters' pods share the load, so a session is what keeps a caller on one.
          serviceImport('api', NS),
          serviceImport('cart', NS),
          ...slices,
          {
            apiVersion: 'gateway.networking.x-k8s.io/v1alpha1',
            kind: 'XBackendTrafficPolicy',
            metadata: { name: 'api-sessions', namespace: NS },
            spec: {
              targetRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'api' }],
              sessionPersistence: { sessionName: POLICY_SESSION },
            },
          },
          httpRoute('cart-mesh', NS, {
            parentRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'cart', port: 80 }],
            rules: [
              {
                backendRefs: [
                  { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'cart', port: 80 },
                ],
                sessionPersistence: { type: 'Header', sessionName: ROUTE_SESSION },
              },
            ],
          }),
        ),
      },
    });
  }, 30_000);

  afterAll(async () => {
    await gw?.stop();
    await agent.close();
    await closeAll(echoes);
  });

  const send = async (service: string, headers: Record<string, string> = {}) => {
    const res = await request(`http://127.0.0.1:${eastWest}/`, {
      dispatcher: agent,
      headers: { host: `${service}.${NS}.svc.clusterset.local`, ...headers },
    });
    const body = (await res.body.json()) as { pod: string };
    return { status: res.statusCode, pod: body.pod, headers: res.headers };
  };

  it("keeps a caller on one pod with the backend policy's cookie, and spreads callers without it", async () => {
    const first = await eventually(async () => {
      const answer = await send('api');
      expect(answer.status).toBe(200);
      expect(String(answer.headers['set-cookie'])).toMatch(new RegExp(`^${POLICY_SESSION}=[A-Za-z0-9_-]+;`));
      return answer;
    }, 10_000);
    const cookie = String(first.headers['set-cookie']).split(';')[0]!;
    for (let i = 0; i < 30; i++) {
      const next = await send('api', { cookie });
      expect(next.pod).toBe(first.pod);
      expect(next.headers['set-cookie']).toBeUndefined();
    }
    const spread = new Set<string>();
    for (let i = 0; i < 30; i++) spread.add((await send('api')).pod);
    expect(spread).toEqual(new Set(['api-1', 'api-2']));
  });

  it("keeps a caller on one pod with a GAMMA route's Header session", async () => {
    const first = await eventually(async () => {
      const answer = await send('cart');
      expect(answer.headers[ROUTE_SESSION]).toBeDefined();
      return answer;
    }, 10_000);
    const value = String(first.headers[ROUTE_SESSION]);
    for (let i = 0; i < 30; i++) {
      const next = await send('cart', { [ROUTE_SESSION]: value });
      expect(next.pod).toBe(first.pod);
      expect(next.headers[ROUTE_SESSION]).toBeUndefined();
    }
  });
});
