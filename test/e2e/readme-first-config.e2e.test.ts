import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoServer, startEchoServer } from '../../src/demo/echo/echo-server.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';

/**
 * The README's "Your own configuration": its YAML, pasted into a folder as a newcomer would (the pod's port
 * moved from 3000 to a free one), served with no problem listed and every object accepted.
 */
const README = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');
const section = README.split(/^## Your own configuration$/m)[1]?.split(/^## /m)[0] ?? '';
const yaml = /^```yaml\n([\s\S]*?)^```$/m.exec(section)?.[1] ?? '';

describe("the README's first own configuration", () => {
  let backend: EchoServer;
  let gateway: GatewayProcess;
  let listenerPort: number;

  beforeAll(async () => {
    backend = await startEchoServer({
      identity: { namespace: 'default', service: 'app', pod: 'app-1', cluster: 'local', zone: 'local' },
    });
    listenerPort = await freePort();
    gateway = await startGateway({
      manifests: { 'gateway.yaml': yaml.replaceAll('3000', String(backend.port)) },
      listenerPortOffset: listenerPort - 80,
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('is in the README', () => {
    expect(yaml).toMatch(/kind: HTTPRoute/);
    expect(yaml).toContain('3000');
  });

  it('routes to the pod it names, with no problem and every route accepted', async () => {
    const answer = await eventually(async () => {
      const response = await fetch(`http://127.0.0.1:${listenerPort}/hello`);
      if (response.status !== 200) throw new Error(`status ${response.status}`);
      return JSON.parse(await response.text()) as { pod: string; path: string };
    }, 10_000);
    expect(answer).toMatchObject({ pod: 'app-1', path: '/hello' });
    const dump = JSON.parse((await gateway.adminGet('/config_dump')).body) as {
      problems: unknown[];
      statuses: Record<
        string,
        { status: { parents?: { conditions: { type: string; status: string }[] }[] } }
      >;
    };
    expect(dump.problems).toEqual([]);
    const route = dump.statuses['HTTPRoute/default/app']?.status.parents?.[0]?.conditions ?? [];
    expect(route.map((c) => `${c.type}=${c.status}`)).toEqual(['Accepted=True', 'ResolvedRefs=True']);
  });
});
