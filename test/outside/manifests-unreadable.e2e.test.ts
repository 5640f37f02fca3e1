import { rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoServer } from '../../src/demo/echo/echo-server.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, httpRoute, service, serviceSlice, yamlDocs } from '../support/manifests.ts';

/**
 * A manifest the gateway cannot read, and the watched folder itself going away, cost only what they hold: before,
 * either crashed the process with a stack trace (an unhandled EACCES/EIO/ENOENT in the reload).
 * `/proc/self/mem` stands in for an unreadable file whoever runs the test: it opens, and reading it fails (EIO).
 */
const NS = 'shop';

describe('manifests folder: unreadable files and a vanished folder', () => {
  let gw: GatewayProcess;
  let echo: { port: number; close(): Promise<void> };
  let port: number;
  const status = async () => (await request(`http://127.0.0.1:${port}/`)).statusCode;
  const problems = async () =>
    (JSON.parse((await gw.adminGet('/config_dump')).body) as { problems: string[] }).problems;

  beforeAll(async () => {
    echo = await startEchoServer({
      host: '127.0.0.1',
      port: 0,
      identity: { namespace: NS, service: 'web', pod: 'web-0', cluster: 'local', zone: 'z' },
    });
    port = await freePort();
    gw = await startGateway({
      manifests: {
        'base.yaml': yamlDocs(
          gatewayClass(),
          gateway('gw', NS, [{ name: 'http', protocol: 'HTTP', port }]),
          service('web', NS),
          serviceSlice('web', 'web', NS, { port: echo.port }),
        ),
        'route.yaml': yamlDocs(
          httpRoute('web', NS, {
            parentRefs: [{ name: 'gw' }],
            rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
          }),
        ),
      },
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await echo?.close();
  });

  it('lists a file it cannot read as that file’s problem and keeps serving', async () => {
    expect(await status()).toBe(200);
    await symlink('/proc/self/mem', join(gw.manifestsDir, 'unreadable.yaml'));
    await eventually(async () => {
      expect(await problems()).toEqual([
        expect.stringMatching(/^unreadable\.yaml: cannot be read \(.*\); not loaded$/),
      ]);
    });
    expect(await status()).toBe(200);
    // The rest of the folder is still watched: a change elsewhere takes effect.
    await gw.writeManifest(
      'route.yaml',
      yamlDocs(
        httpRoute('web', NS, {
          parentRefs: [{ name: 'gw' }],
          rules: [
            {
              matches: [{ path: { type: 'PathPrefix', value: '/other' } }],
              backendRefs: [{ name: 'web', port: 80 }],
            },
          ],
        }),
      ),
    );
    await eventually(async () => expect(await status()).toBe(404));
  });

  it('keeps the last configuration when the folder itself goes away, and says so', async () => {
    await gw.writeManifest(
      'route.yaml',
      yamlDocs(
        httpRoute('web', NS, {
          parentRefs: [{ name: 'gw' }],
          rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
        }),
      ),
    );
    await eventually(async () => expect(await status()).toBe(200));
    await rm(gw.manifestsDir, { recursive: true, force: true });
    await eventually(async () =>
      expect(await problems()).toEqual([
        `${gw.manifestsDir}: no such file or folder (ENOENT); the last configuration read from it stays in effect`,
      ]),
    );
    expect(await status()).toBe(200);
    expect(gw.output()).not.toMatch(/\n\s+at /);
  });
});
