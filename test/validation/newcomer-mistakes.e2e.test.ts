import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoServer } from '../../src/demo/echo/echo-server.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, service, serviceSlice, yamlDocs } from '../support/manifests.ts';

const NS = 'shop';

/** The route a user writes first; each mistake below is one edit of it (line numbers are this text's). */
const GOOD_ROUTE = [
  'apiVersion: gateway.networking.k8s.io/v1', // 1
  'kind: HTTPRoute', // 2
  'metadata:', // 3
  '  name: web', // 4
  `  namespace: ${NS}`, // 5
  'spec:', // 6
  '  parentRefs:', // 7
  '  - name: edge', // 8
  '  hostnames: [shop.example.com]', // 9
  '  rules:', // 10
  '  - matches:', // 11
  '    - path: {type: PathPrefix, value: /}', // 12
  '    backendRefs:', // 13
  '    - name: web', // 14
  '      port: 80', // 15
  '',
].join('\n');

const edit = (line: number, text: string) => {
  const lines = GOOD_ROUTE.split('\n');
  lines[line - 1] = text;
  return lines.join('\n');
};
const insertAfter = (line: number, ...text: string[]) => {
  const lines = GOOD_ROUTE.split('\n');
  lines.splice(line, 0, ...text);
  return lines.join('\n');
};

const KEPT = 'HTTPRoute shop/web (the last valid version stays in effect)';

/** Each newcomer mistake and the one problem it gives: file, line, field path and what is wrong. */
const MISTAKES: readonly { name: string; text: string; problem: string }[] = [
  {
    name: 'a typo in a rule field (backendRef)',
    text: edit(13, '    backendRef:'),
    problem: `route.yaml:13: ${KEPT}: spec.rules[0].backendRef: unknown field "backendRef"`,
  },
  {
    name: 'an unknown kind (HTTPRoutes)',
    text: edit(2, 'kind: HTTPRoutes'),
    problem:
      'route.yaml:2: HTTPRoutes shop/web (the last valid version stays in effect): kind: no matches for kind "HTTPRoutes" in version "gateway.networking.k8s.io/v1" (did you mean kind "HTTPRoute"?)',
  },
  {
    name: 'a group typo',
    text: edit(1, 'apiVersion: gateway.networking.k8s.com/v1'),
    problem:
      'route.yaml:1: HTTPRoute shop/web (the last valid version stays in effect): apiVersion: no matches for kind "HTTPRoute" in version "gateway.networking.k8s.com/v1" (HTTPRoute is served as apiVersion gateway.networking.k8s.io/v1, gateway.networking.k8s.io/v1beta1)',
  },
  {
    name: 'a version typo',
    text: edit(1, 'apiVersion: gateway.networking.k8s.io/v2'),
    problem: `route.yaml:1: ${KEPT}: apiVersion: Invalid value: "gateway.networking.k8s.io/v2": no matches for kind "HTTPRoute" in version "gateway.networking.k8s.io/v2" (HTTPRoute is served as apiVersion gateway.networking.k8s.io/v1, gateway.networking.k8s.io/v1beta1)`,
  },
  {
    name: 'a key written twice',
    text: insertAfter(15, '      port: 8080'),
    problem: `route.yaml:16: ${KEPT}: spec.rules[0].backendRefs[0].port: duplicate field "port"`,
  },
  {
    name: 'a wrong type (port: "80"), one problem only',
    text: edit(15, '      port: "80"'),
    problem: `route.yaml:15: ${KEPT}: spec.rules[0].backendRefs[0].port: Invalid value: "string": spec.rules[0].backendRefs[0].port in body must be of type integer: "string"`,
  },
  {
    name: 'an unknown field nested in a filter',
    text: insertAfter(
      12,
      '    filters:',
      '    - type: RequestHeaderModifier',
      '      requestHeaderModifier:',
      '        sett: [{name: x-a, value: b}]',
    ),
    problem: `route.yaml:16: ${KEPT}: spec.rules[0].filters[0].requestHeaderModifier.sett: unknown field "sett"`,
  },
  {
    name: 'an unknown field in metadata',
    text: insertAfter(5, '  label: {app: web}'),
    problem: `route.yaml:6: ${KEPT}: metadata.label: unknown field "label"`,
  },
  {
    name: 'an unknown field in a list item',
    text: insertAfter(8, '    sectionNam: http'),
    problem: `route.yaml:9: ${KEPT}: spec.parentRefs[0].sectionNam: unknown field "sectionNam"`,
  },
];

describe('newcomer mistakes in a watched folder: one exact problem each, and the last good route keeps serving', () => {
  let echo: { port: number; close(): Promise<void> };
  let gw: GatewayProcess;
  let port: number;
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 1 });

  beforeAll(async () => {
    echo = await startEchoServer({
      host: '127.0.0.1',
      port: 0,
      identity: { namespace: NS, service: 'web', pod: 'web-pod', cluster: 'local', zone: 'z1' },
    });
    port = await freePort();
    gw = await startGateway({
      manifests: {
        'base.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port }]),
          serviceSlice('web-a', 'web', NS, { port: echo.port, pod: 'web-pod' }),
        ),
        'service.yaml': yamlDocs(service('web', NS)),
        'route.yaml': GOOD_ROUTE,
      },
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await agent.close();
    await echo?.close();
  });

  async function get(path: string): Promise<{ status: number; body: string }> {
    const response = await request(`http://127.0.0.1:${port}${path}`, {
      headers: { host: 'shop.example.com' },
      dispatcher: agent,
    });
    return { status: response.statusCode, body: await response.body.text() };
  }

  async function problems(): Promise<string[]> {
    return (JSON.parse((await gw.adminGet('/config_dump')).body) as { problems: string[] }).problems;
  }

  it('serves the good route', async () => {
    expect((await get('/')).status).toBe(200);
    expect(await problems()).toEqual([]);
  });

  for (const mistake of MISTAKES) {
    it(`${mistake.name}`, async () => {
      await gw.writeManifest('route.yaml', mistake.text);
      await eventually(async () => expect(await problems()).toEqual([mistake.problem]));
      const answer = await get('/any');
      expect(answer.status).toBe(200);
      expect(answer.body).toContain('web-pod');
      await gw.writeManifest('route.yaml', GOOD_ROUTE);
      await eventually(async () => expect(await problems()).toEqual([]));
    });
  }

  it('logs each problem once, with file and line', () => {
    const lines = gw
      .output()
      .split('\n')
      .filter((l) => l.includes('spec.rules[0].backendRef: unknown field'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 50, file: 'route.yaml', line: 13 });
  });

  it('a built-in kind with an unknown field (Service spec.selectr) keeps its last good version too', async () => {
    const good = yamlDocs(service('web', NS));
    const svc = good.replace('  selector:', '  selectr:');
    await gw.writeManifest('service.yaml', svc);
    const line = svc.split('\n').findIndex((l) => l.includes('selectr:')) + 1;
    await eventually(async () =>
      expect(await problems()).toEqual([
        `service.yaml:${line}: Service shop/web (the last valid version stays in effect): spec.selectr: unknown field "selectr"`,
      ]),
    );
    expect((await get('/')).status).toBe(200);
    await gw.writeManifest('service.yaml', good);
    await eventually(async () => expect(await problems()).toEqual([]));
  });
});

describe('--validation warn', () => {
  let gw: GatewayProcess;
  let port: number;
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 1 });

  beforeAll(async () => {
    port = await freePort();
    gw = await startGateway({
      manifests: {
        'base.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port }]),
          service('web', NS),
        ),
        'route.yaml': edit(13, '    backendRef:'),
      },
      args: ['--validation', 'warn'],
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await agent.close();
  });

  it('drops the unknown field with a warning and loads the object, as kube-apiserver does with fieldValidation=Warn', async () => {
    const problems = (JSON.parse((await gw.adminGet('/config_dump')).body) as { problems: string[] })
      .problems;
    expect(problems).toEqual([
      'route.yaml:13: warning: HTTPRoute shop/web: spec.rules[0].backendRef: unknown field "backendRef" (dropped: --validation=warn)',
    ]);
    // The route is in effect without the dropped field: a rule with no backend answers 500, as the spec says.
    const response = await request(`http://127.0.0.1:${port}/`, {
      headers: { host: 'shop.example.com' },
      dispatcher: agent,
    });
    await response.body.text();
    expect(response.statusCode).toBe(500);
    const warned = gw
      .output()
      .split('\n')
      .filter((l) => l.includes('backendRef: unknown field'));
    expect(JSON.parse(warned[0] as string)).toMatchObject({ level: 40, line: 13 });
  });
});
