import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateway, gatewayClass, httpRoute, service, serviceImport, yamlDocs } from '../support/manifests.ts';
import { type Browser, launchChromium } from './chromium.ts';
import { type DemoProcess, startProgram } from './demo-process.ts';

/**
 * Bad input for the page: 10,000 endpoints, endpoints without a zone, a backend without any endpoint. The page
 * stays small (zones past the limit show counts) and says what is missing in words.
 */
const NS = 'big';

/** The little of the DOM the in-page functions use (the project compiles without the DOM library). */
declare const document: {
  readonly body: { readonly dataset: Record<string, string | undefined> };
  getElementsByTagName(name: string): { readonly length: number };
};
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c', 'us-west-1a'];

/** 10,000 endpoints in 2 clusters and 4 zones (100 per slice, as Kubernetes cuts them) plus 10 without a zone. */
function slices(): unknown[] {
  const out: unknown[] = [];
  for (let s = 0; s < 100; s++) {
    const cluster = s < 50 ? 'east-1' : 'west-1';
    out.push({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: `web-${s}`,
        namespace: NS,
        labels: {
          'multicluster.kubernetes.io/service-name': 'web',
          'multicluster.kubernetes.io/source-cluster': cluster,
        },
      },
      addressType: 'IPv4',
      endpoints: Array.from({ length: 100 }, (_, i) => ({
        addresses: [`10.${s}.${Math.floor(i / 50)}.${(i % 50) + 1}`],
        conditions: { ready: true },
        zone: ZONES[s % 4],
        nodeName: `node-${s % 20}`,
      })),
      ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    });
  }
  out.push({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: 'web-zoneless',
      namespace: NS,
      labels: {
        'multicluster.kubernetes.io/service-name': 'web',
        'multicluster.kubernetes.io/source-cluster': 'west-1',
      },
    },
    addressType: 'IPv4',
    endpoints: Array.from({ length: 10 }, (_, i) => ({
      addresses: [`10.200.0.${i + 1}`],
      conditions: { ready: true },
    })),
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
  });
  return out;
}

describe('topology page with 10,000 endpoints and missing data', () => {
  let dir: string;
  let gw: DemoProcess;
  let browser: Browser;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'csgw-scale-'));
    await writeFile(
      join(dir, 'big.yaml'),
      yamlDocs(
        gatewayClass(),
        // 8080: startProgram serves it at a free port through --listener-port-offset.
        gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port: 8080 }]),
        serviceImport('web', NS, 'PreferSameZone'),
        service('empty', NS),
        httpRoute('web', NS, {
          parentRefs: [{ name: 'edge' }],
          rules: [
            {
              matches: [{ path: { type: 'PathPrefix', value: '/empty' } }],
              backendRefs: [{ name: 'empty', port: 80 }],
            },
            {
              backendRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web', port: 80 }],
            },
          ],
        }),
      ),
    );
    // One file per 10 slices: a file holding all of them would pass the 1 MiB --max-manifest-bytes.
    const all = slices();
    for (let i = 0; i < all.length; i += 10)
      await writeFile(join(dir, `slices-${i / 10}.yaml`), yamlDocs(...all.slice(i, i + 10)));
    gw = await startProgram(['--manifests', dir, '--cluster', 'east-1', '--zone', 'us-east-1a']);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await rm(dir, { recursive: true, force: true });
  }, 30_000);

  it('shows counts per zone past the limit, "no zone", and a backend without endpoints', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${gw.adminUrl}/ui`);
    const web = page.locator('[data-backend="ServiceImport/big/web:80"]');
    await web.waitFor({ timeout: 15_000 });
    await expect(web.locator('h2').textContent()).resolves.toContain('10010/10010 healthy');
    // 4 zones per cluster (1,200 or 1,300 endpoints each) + the zoneless box: nothing lists its endpoints one by one.
    expect(await web.locator('.zone').count()).toBe(9);
    expect(await web.locator('.ep').count()).toBe(10);
    expect(await web.locator('.zone.missing > .label').textContent()).toMatch(/no zone.*10\/10 healthy/);
    expect(
      await web.locator('[data-cluster="east-1"] [data-zone="us-east-1a"] .count').first().textContent(),
    ).toBe('1300/1300 healthy');
    expect(await web.locator('[data-cluster="east-1"] [data-zone="us-east-1a"]').textContent()).toContain(
      'more not listed',
    );
    const empty = page.locator('[data-backend="Service/big/empty:80"]');
    await expect(empty.textContent()).resolves.toContain('no endpoints: requests get 503');
    // Live updates keep arriving: the page is not frozen by the size.
    const first = await page.evaluate(() => document.body.dataset['generatedAt']);
    await page.waitForFunction((seen) => document.body.dataset['generatedAt'] !== seen, first, {
      timeout: 5000,
    });
    const elements = await page.evaluate(() => document.getElementsByTagName('*').length);
    expect(elements).toBeLessThan(2000);
    console.log(`10,010 endpoints: ${elements} DOM elements`);
    await page.close();
  }, 60_000);
});
