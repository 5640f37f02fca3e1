import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Condition } from '../../src/snapshot/resources.ts';
import { builtProgram, freePort } from '../support/gateway-process.ts';
import type { KubeApiServer } from '../support/kube-api-server/index.ts';
import { eventually, GATEWAY_API, gatewayClass, withServer } from './helpers.ts';

/**
 * The unbound listener as the API server sees it (`--kubernetes`): the status writer writes the Gateway's
 * Programmed=False (PortUnavailable) while another process holds the port, and True once the retry binds it,
 * with no change to any object in between.
 */
const ROOT = resolve(import.meta.dirname, '../..');

interface GatewayStatusView {
  conditions?: Condition[];
  listeners?: { name: string; conditions: Condition[] }[];
}

describe('a Gateway listener whose port is held, with --kubernetes', () => {
  let server: KubeApiServer | undefined;
  let child: ChildProcess | undefined;
  let blocker: Server | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'csgw-listener-status-'));

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((res) => child?.once('exit', res));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child?.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    if (blocker?.listening) await new Promise((res) => blocker?.close(res));
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes Programmed=False (PortUnavailable) while held, then Programmed=True once bound', async () => {
    server = await withServer();
    server.create(gatewayClass());
    server.create({
      apiVersion: GATEWAY_API,
      kind: 'Gateway',
      metadata: { name: 'edge', namespace: 'default' },
      spec: { gatewayClassName: 'clusterset', listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }] },
    });
    const heldPort = await freePort();
    const held = createServer();
    blocker = held;
    await new Promise<void>((res) => held.listen(heldPort, '127.0.0.1', res));
    const kubeconfig = server.writeKubeconfig(join(dir, 'kubeconfig'));
    let output = '';
    child = spawn(
      process.execPath,
      [
        builtProgram(),
        '--kubernetes',
        '--kubeconfig',
        kubeconfig,
        '--address',
        '127.0.0.1',
        '--admin-port',
        String(await freePort()),
        '--listener-port-offset',
        String(heldPort - 8080),
        '--listener-bind-retry-max-ms',
        '300',
        '--log-level',
        'warn',
      ],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, KUBERNETES_SERVICE_HOST: '', POD_NAME: 'replica-a', POD_NAMESPACE: 'default' },
      },
    );
    child.stdout?.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      output += c.toString();
    });
    const api = server;
    const status = (): GatewayStatusView =>
      (api.get('gateways', 'default', 'edge')?.['status'] ?? {}) as GatewayStatusView;
    const programmed = (conditions: readonly Condition[] | undefined) =>
      conditions?.find((c) => c.type === 'Programmed');

    await eventually(
      () => programmed(status().listeners?.[0]?.conditions)?.status === 'False',
      `Programmed=False on the listener:\n${output}`,
      60_000,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${output}`);
    });
    const listener = programmed(status().listeners?.[0]?.conditions);
    expect(listener?.reason).toBe('PortUnavailable');
    expect(listener?.message).toContain(`127.0.0.1:${heldPort}`);
    expect(listener?.message).toContain('EADDRINUSE');
    expect(programmed(status().conditions)).toMatchObject({ status: 'False', reason: 'PortUnavailable' });

    await new Promise((res) => held.close(res));
    await eventually(
      () =>
        programmed(status().listeners?.[0]?.conditions)?.status === 'True' &&
        programmed(status().conditions)?.status === 'True',
      'Programmed=True once the port is free',
      15_000,
    );
    expect(programmed(status().listeners?.[0]?.conditions)?.reason).toBe('Programmed');
  }, 120_000);
});
