import { readdirSync } from 'node:fs';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EchoResponse } from '../../src/demo/echo/echo-server.ts';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, httpRoute, service, serviceSlice, yamlDocs } from '../support/manifests.ts';

/**
 * `--file-source-thread` as a user runs it: the manifests folder read on a thread of its own (one thread more
 * than the same gateway without the flag), routes served from it, an edit followed, and a broken file listed in
 * /config_dump's problems while the last good objects keep serving.
 */
const NS = 'shop';

const threadsOf = (pid: number | undefined): number => readdirSync(`/proc/${pid}/task`).length;

describe('--file-source-thread', () => {
  let pods: RunningEcho[];
  let port: number;
  let threaded: GatewayProcess;
  let inline: GatewayProcess;

  const manifests = (podPort: number, listenerPort: number) => ({
    'web.yaml': yamlDocs(
      gatewayClass(),
      gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port: listenerPort }]),
      service('web', NS),
      httpRoute('web', NS, {
        parentRefs: [{ name: 'edge' }],
        rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
      }),
    ),
    'slice.yaml': yamlDocs(serviceSlice('web-1', 'web', NS, { port: podPort, pod: 'web-1' })),
  });

  beforeAll(async () => {
    pods = await startEchoes(['a', 'b'], { namespace: NS, service: 'web' });
    port = await freePort();
    threaded = await startGateway({
      manifests: manifests(pods[0]!.port, port),
      args: ['--file-source-thread'],
    });
    inline = await startGateway({ manifests: manifests(pods[0]!.port, await freePort()) });
  }, 120_000);

  afterAll(async () => {
    await threaded?.stop();
    await inline?.stop();
    await closeAll(pods ?? []);
  });

  const podBehind = async (): Promise<string | undefined> => {
    const res = await request(`http://127.0.0.1:${port}/`);
    if (res.statusCode !== 200) {
      await res.body.dump();
      return undefined;
    }
    return ((await res.body.json()) as EchoResponse).pod;
  };

  it('reads the folder on a thread of its own, serves from it and follows edits', async () => {
    expect(threadsOf(threaded.pid) - threadsOf(inline.pid)).toBe(1);
    await eventually(async () => expect(await podBehind()).toBe('a'));
    await threaded.writeManifest(
      'slice.yaml',
      yamlDocs(serviceSlice('web-1', 'web', NS, { port: pods[1]!.port })),
    );
    await eventually(async () => expect(await podBehind()).toBe('b'));
  });

  it('lists a broken file in /config_dump and keeps serving the last good objects', async () => {
    await threaded.writeManifest('slice.yaml', 'kind: EndpointSlice\nmetadata: {name: [web-1\n');
    await eventually(async () => {
      const dump = JSON.parse((await threaded.adminGet('/config_dump')).body) as { problems: string[] };
      expect(dump.problems.some((p) => p.startsWith('slice.yaml:'))).toBe(true);
    });
    expect(await podBehind()).toBe('b');
  });
});
