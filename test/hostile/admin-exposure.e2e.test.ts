import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { type AdminServer, startAdminServer, startMetricsServer } from '../../src/admin/admin-server.ts';
import { parseCli } from '../../src/cli/args.ts';
import { silentLogger } from '../proxy/fixtures.ts';

const state = {
  readiness: () => ({ ready: true, reasons: [] }),
  configDump: () => ({ secret: 'would be here' }),
};

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

describe('admin exposure', () => {
  const servers: AdminServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });

  it('binds the admin server to 127.0.0.1 by default, with --kubernetes too; exposure is asked for by name', () => {
    expect(parseCli([], {}).adminAddress).toBe('127.0.0.1');
    expect(parseCli(['--kubernetes'], {}).adminAddress).toBe('127.0.0.1');
    expect(parseCli(['--admin-address', '0.0.0.0'], {}).adminAddress).toBe('0.0.0.0');
    expect(parseCli([], {}).metrics).toBeUndefined();
    expect(parseCli(['--metrics-port', '9902'], {}).metrics).toEqual({ address: '0.0.0.0', port: 9902 });
    expect(() => parseCli(['--metrics-address', '0.0.0.0'], {})).toThrow(
      '--metrics-address needs --metrics-port',
    );
  });

  it('the metrics server serves /metrics, /healthz and /readyz only; /config_dump stays on the admin server', async () => {
    const registry = new Registry();
    const metrics = await startMetricsServer({
      host: '127.0.0.1',
      port: 0,
      registry,
      state,
      logger: silentLogger,
    });
    const admin = await startAdminServer({
      host: '127.0.0.1',
      port: 0,
      registry,
      state,
      logger: silentLogger,
    });
    servers.push(metrics, admin);
    expect((await get(metrics.port, '/metrics')).status).toBe(200);
    expect((await get(metrics.port, '/healthz')).body).toBe('ok\n');
    expect((await get(metrics.port, '/readyz')).status).toBe(200);
    const dump = await get(metrics.port, '/config_dump');
    expect(dump.status).toBe(404);
    expect(dump.body).not.toContain('would be here');
    expect((await get(admin.port, '/config_dump')).status).toBe(200);
  });

  it('every limit has a flag and a default', () => {
    const defaults = parseCli([], {}).limits;
    expect(defaults).toMatchObject({
      drainTimeoutMs: 15_000,
      headerTimeoutMs: 10_000,
      maxHeaderBytes: 16_384,
      maxHeaders: 100,
      upstreamResponseTimeoutMs: 60_000,
      sendTimeoutMs: 60_000,
    });
    expect(parseCli(['--max-headers', '50', '--drain-timeout-ms', '30000'], {}).limits).toMatchObject({
      maxHeaders: 50,
      drainTimeoutMs: 30_000,
    });
    expect(() => parseCli(['--max-headers', '0'], {})).toThrow('--max-headers');
  });
});
