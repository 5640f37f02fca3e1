import { copyFile, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launchChromium } from './chromium.ts';
import { type DemoProcess, startDemo, steadyLoad } from './demo-process.ts';

/**
 * Issue 17, "Done when": headless Chromium against `npm start`'s demo. The page shows the simulated clusters
 * and zones; after the near backends are stopped it shows them unhealthy and the tier shares move within 5 s.
 * Screenshots land in test-results/browser/; UPDATE_SCREENSHOT=1 also refreshes the README's picture.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const ARTIFACTS = join(ROOT, 'test-results', 'browser');
const README_SCREENSHOT = join(ROOT, 'docs', 'topology-page.png');
const WEB = 'ServiceImport/demo/web:80';

const backend = (id: string) => `[data-backend="${id}"]`;

/** The little of the DOM the in-page predicates use (the project compiles without the DOM library). */
interface PageElement {
  getAttribute(name: string): string | null;
  readonly textContent: string | null;
}
declare const document: {
  querySelector(selector: '#status'): { readonly textContent: string | null } | null;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement>;
};

async function tierShares(page: Page, tier: number): Promise<{ configured: number; served: number | null }> {
  const row = page.locator(`${backend(WEB)} tr[data-tier="${tier}"]`);
  const configured = Number(await row.getAttribute('data-configured-share'));
  const served = await row.getAttribute('data-served-share');
  return { configured, served: served ? Number(served) : null };
}

describe('topology page in headless Chromium, on the demo', () => {
  let demo: DemoProcess;
  let browser: Browser;
  let load: ReturnType<typeof steadyLoad>;

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    demo = await startDemo();
    load = steadyLoad(`${demo.webUrl}/`);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await load?.stop();
    await browser?.close();
    await demo?.stop();
  }, 30_000);

  it('shows clusters, zones and live tier shares, and follows a near backend going down', async () => {
    const page = await browser.context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
    await page.goto(`${demo.adminUrl}/`);

    const web = page.locator(backend(WEB));
    await web.waitFor({ timeout: 10_000 });
    // Updates arrive over the Server-Sent Events stream, not by polling.
    await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'live', undefined, {
      timeout: 5000,
    });
    await expect(page.locator('#gateway').textContent()).resolves.toMatch(
      /cluster east-1 · zone us-east-1a · node east-1-node-a/,
    );
    for (const cluster of ['east-1', 'east-2', 'west-1'])
      expect(await web.locator(`[data-cluster="${cluster}"]`).count()).toBe(1);
    for (const zone of ['us-east-1a', 'us-east-1b', 'us-east-1c'])
      expect(await web.locator(`[data-zone="${zone}"]`).count()).toBe(1);
    // west-1 is on a network of its own: one target reached through its network gateway, so no zones of its own;
    // the networks line names it and its gateway, healthy.
    expect(await web.locator('[data-zone="us-west-1a"]').count()).toBe(0);
    await page.waitForFunction(
      () =>
        /^net-west: west-1 via 127\.0\.0\.1:\d+ healthy/.test(
          document.querySelector('#networks [data-network="net-west"]')?.textContent ?? '',
        ),
      undefined,
      { timeout: 10_000 },
    );
    // The gateway's own cluster, zone and node are marked.
    expect(await web.locator('.cluster.local').getAttribute('data-cluster')).toBe('east-1');
    expect(await web.locator('.zone.local').getAttribute('data-zone')).toBe('us-east-1a');
    expect(await web.locator('.node.local').getAttribute('data-node')).toBe('east-1-node-a');
    await expect(web.locator('h2').textContent()).resolves.toContain('PreferSameZone');
    expect(
      await web
        .locator('tr[data-tier]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-tier-name'))),
    ).toEqual(['zone', 'cluster', 'region', 'clusterset']);
    expect(await page.locator(`${backend('Service/demo/api:80')} .meta`).textContent()).toContain(
      'weight 90 (90%)',
    );
    // The ClusterSelectionPolicy on payments: its tiers with their clusters, and a boundary drawn around them.
    const payments = page.locator(backend('ServiceImport/demo/payments:80'));
    await expect(payments.locator('.policy').textContent()).resolves.toBe(
      'ClusterSelectionPolicy demo/payments-us-east: local [east-1] → region [east-2]; boundary: fallback None, 1 endpoint outside never used',
    );
    expect(
      await payments
        .locator('.clusters.bounded [data-cluster]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-cluster'))),
    ).toEqual(['east-1', 'east-2']);
    expect(await web.locator('.clusters.bounded').count()).toBe(0);
    const nearEndpoints = web.locator('[data-zone="us-east-1a"] .ep');
    // The demo runs three near pods (src/demo), all ready.
    expect(await nearEndpoints.count()).toBe(3);
    expect(await nearEndpoints.evaluateAll((eps) => eps.map((e) => e.getAttribute('data-healthy')))).toEqual([
      'true',
      'true',
      'true',
    ]);

    // Steady load: the near zone takes and serves everything.
    await page.waitForFunction(
      (sel) =>
        Number(document.querySelector(`${sel} tr[data-tier="0"]`)?.getAttribute('data-served-share')) > 0.99,
      backend(WEB),
      { timeout: 15_000 },
    );
    expect(await tierShares(page, 0)).toEqual({ configured: 1, served: 1 });
    await page.screenshot({ path: join(ARTIFACTS, 'topology-before-stop.png'), fullPage: true });

    await demo.adminPost('/demo/stop?zone=us-east-1a');
    const stoppedAt = Date.now();
    // Evaluated in the page (the page's CSP forbids string evaluation, so these are functions).
    await page.waitForFunction(
      (sel) => {
        const eps = Array.from(document.querySelectorAll(`${sel} [data-zone="us-east-1a"] .ep`));
        const share = (t: number, name: string) =>
          Number(document.querySelector(`${sel} tr[data-tier="${t}"]`)?.getAttribute(name));
        return (
          eps.length === 3 &&
          eps.every((e) => e.getAttribute('data-healthy') === 'false') &&
          share(0, 'data-configured-share') < 1 &&
          share(1, 'data-served-share') > 0
        );
      },
      backend(WEB),
      // Two failed probes 2 s ± 10% apart mark a stopped pod down (avoidance alone never moves tier shares), then
      // the page's next update: about 5 s, more on a loaded machine.
      { timeout: 15_000 },
    );
    const seconds = (Date.now() - stoppedAt) / 1000;
    console.log(
      `topology page showed the near zone down and the shares moved ${seconds.toFixed(1)} s after the stop`,
    );

    const after = await tierShares(page, 0);
    expect(after.configured).toBe(0);
    expect(after.served).toBeLessThan(1);
    expect((await tierShares(page, 1)).configured).toBe(1);
    const health = await nearEndpoints.evaluateAll((eps) => eps.map((e) => e.textContent));
    expect(health.every((text) => /ejected|unhealthy/.test(text ?? ''))).toBe(true);
    expect(await web.locator('[data-zone="us-east-1a"] .count.bad').first().textContent()).toContain(
      '0/3 healthy',
    );

    const shot = join(ARTIFACTS, 'topology-after-stop.png');
    await page.screenshot({ path: shot, fullPage: true });
    if (process.env.UPDATE_SCREENSHOT === '1') {
      await mkdir(join(ROOT, 'docs'), { recursive: true });
      await copyFile(shot, README_SCREENSHOT);
    }
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 60_000);
});
