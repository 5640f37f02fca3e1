import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { type DemoProcess, startDemo } from '../browser/demo-process.ts';

/**
 * The demo's pods and member API servers run in a child process of the gateway (src/demo/world.ts). Real
 * processes: the gateway from `npm start`'s entry and its child, found by the PIDs the banner prints.
 */
function pids(demo: DemoProcess): { world: number; gateway: number } {
  const match = /pods and member clusters run in process (\d+), the gateway in (\d+)/.exec(demo.output());
  if (!match) throw new Error(`no process line in the banner:\n${demo.output()}`);
  return { world: Number(match[1]), gateway: Number(match[2]) };
}

/** Gone, or a zombie nobody has reaped yet (a container's PID 1 may not reap): either way it runs no more. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function until(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`still waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function hubManifests(demo: DemoProcess): string {
  const match = /hub manifests: (\S+)/.exec(demo.output());
  if (!match) throw new Error('no hub manifests line in the banner');
  return match[1]!;
}

function kubeconfigPath(demo: DemoProcess): string {
  const match = /kubeconfig for the members: (\S+)/.exec(demo.output());
  if (!match) throw new Error('no kubeconfig line in the banner');
  return match[1]!;
}

describe('the demo world in its own process', () => {
  let demo: DemoProcess | undefined;
  afterEach(async () => {
    await demo?.stop();
    demo = undefined;
  });

  it('runs the pods outside the gateway: the gateway proxies to them, /demo/stop and /demo/start reach them', async () => {
    demo = await startDemo();
    const { world, gateway } = pids(demo);
    expect(world).not.toBe(gateway);
    expect(running(world)).toBe(true);
    const body = await (await fetch(`${demo.webUrl}/`)).text();
    expect(body).toContain('"cluster": "east-1"');
    expect(await demo.adminPost('/demo/stop?pod=web-us-east-1a-3')).toBe('stopped: web-us-east-1a-3\n');
    expect(await demo.adminPost('/demo/start?pod=web-us-east-1a-3')).toBe('started: web-us-east-1a-3\n');
    const typo = await fetch(`${demo.adminUrl}/demo/stop?zone=mars`, { method: 'POST' });
    expect(typo.status).toBe(404);
    expect(await typo.text()).toContain('no zone named "mars"');
  }, 60_000);

  it("survives its world's death: the gateway logs it and the demo's admin routes answer 503 saying why", async () => {
    demo = await startDemo();
    const { world } = pids(demo);
    process.kill(world, 'SIGKILL');
    await until('the gateway to notice', () =>
      demo!
        .output()
        .includes("the demo's pods and member clusters stopped; the gateway goes on without them"),
    );
    const stop = await fetch(`${demo.adminUrl}/demo/stop?pod=web-us-east-1a-3`, { method: 'POST' });
    expect(stop.status).toBe(503);
    expect(await stop.text()).toBe(
      `the demo's pods and member clusters (process ${world}) were killed by SIGKILL: restart the demo (npm start) to get them back\n`,
    );
    const start = await fetch(`${demo.adminUrl}/demo/start?cluster=east-1`, { method: 'POST' });
    expect(start.status).toBe(503);
    // Still a gateway: its admin server and its listener answer. Every endpoint refuses: 502 (docs/fleet.md),
    // before the health checks have seen it and after (nothing healthy: the nearest tier is tried in panic);
    // /payments' ClusterSelectionPolicy boundary never panics: 503.
    expect((await fetch(`${demo.adminUrl}/config_dump`)).status).toBe(200);
    const status = async (path: string): Promise<number> => {
      const response = await fetch(`${demo!.webUrl}${path}`);
      await response.arrayBuffer();
      return response.status;
    };
    expect(await status('/')).toBe(502);
    await until('every web endpoint to be unhealthy', async () => {
      const dump = (await (await fetch(`${demo!.adminUrl}/config_dump`)).json()) as {
        balancers: Record<string, { endpoints: { healthy: boolean }[] }>;
      };
      return Object.values(dump.balancers).every((b) => b.endpoints.every((e) => !e.healthy));
    });
    for (let i = 0; i < 10; i++) expect([await status('/'), await status('/api')]).toEqual([502, 502]);
    expect(await status('/payments')).toBe(503);
  }, 60_000);

  it("returns from /demo/stop and /demo/start once the gateway's health model has the change", async () => {
    demo = await startDemo();
    const zoneHealth = async (): Promise<boolean[]> => {
      const dump = (await (await fetch(`${demo!.adminUrl}/config_dump`)).json()) as {
        balancers: Record<string, { endpoints: { zone?: string; healthy: boolean }[] }>;
      };
      return Object.values(dump.balancers).flatMap((b) =>
        b.endpoints.filter((e) => e.zone === 'us-east-1a').map((e) => e.healthy),
      );
    };
    const before = await zoneHealth();
    expect(before.length).toBeGreaterThan(3);
    expect(before.every((healthy) => healthy)).toBe(true);
    // No polling: the answer itself means the health model has it.
    expect(await demo.adminPost('/demo/stop?zone=us-east-1a')).toMatch(/^stopped: web-us-east-1a-1 .*\n$/);
    expect((await zoneHealth()).every((healthy) => !healthy)).toBe(true);
    const served = await fetch(`${demo.webUrl}/`);
    expect([served.status, ((await served.json()) as { zone: string }).zone]).toEqual([200, 'us-east-1b']);
    await demo.adminPost('/demo/start?zone=us-east-1a');
    expect((await zoneHealth()).every((healthy) => healthy)).toBe(true);
    const back = await fetch(`${demo.webUrl}/`);
    expect([back.status, ((await back.json()) as { zone: string }).zone]).toEqual([200, 'us-east-1a']);
  }, 60_000);

  it('ends with the gateway, killed or stopped: no pod or member API server outlives it', async () => {
    demo = await startDemo();
    const killed = pids(demo);
    process.kill(killed.gateway, 'SIGKILL');
    await until(`world ${killed.world} to exit after the gateway was killed`, () => !running(killed.world));
    await demo.stop();
    // The world cleaned up its own folder; the hub manifests were the killed gateway's to remove, so the next
    // demo removes them.
    expect(existsSync(kubeconfigPath(demo))).toBe(false);
    const leftBehind = hubManifests(demo);
    expect(existsSync(leftBehind)).toBe(true);

    demo = await startDemo();
    expect(existsSync(leftBehind)).toBe(false);
    const stopped = pids(demo);
    const kubeconfig = kubeconfigPath(demo);
    expect(existsSync(kubeconfig)).toBe(true);
    await demo.stop();
    demo = undefined;
    expect(running(stopped.gateway)).toBe(false);
    await until(`world ${stopped.world} to exit after the gateway stopped`, () => !running(stopped.world));
    // The world removes its folder (certificate, credential plugin, tokens) on the way out.
    expect(existsSync(kubeconfig)).toBe(false);
  }, 90_000);
});
