import { describe, expect, it } from 'vitest';
import { resolveServiceBackend, resolveServiceImportBackend } from '../../src/mcs/backends.ts';
import { snapshotFromYaml } from './fixtures.ts';

/** Issue 10: per Service/ServiceImport health check annotations, bad values reported and defaulted. */
function resolve(annotations: Record<string, string>, kind: 'Service' | 'ServiceImport' = 'Service') {
  const meta = `metadata:\n  name: web\n  namespace: shop\n  annotations: ${JSON.stringify(annotations)}`;
  const object =
    kind === 'Service'
      ? `apiVersion: v1\nkind: Service\n${meta}\nspec:\n  ports: [{ name: http, port: 80 }]`
      : `apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceImport\n${meta}\nspec:\n  type: ClusterSetIP\n  ports: [{ name: http, port: 80, protocol: TCP }]`;
  const snap = snapshotFromYaml(object);
  const res =
    kind === 'Service'
      ? resolveServiceBackend(snap, 'shop', 'web', 80, { cluster: 'east' })
      : resolveServiceImportBackend(snap, 'shop', 'web', 80, { cluster: 'east' });
  if (!res.ok) throw new Error(res.message);
  return { healthCheck: res.backend.healthCheck, warnings: res.warnings ?? [] };
}

describe('health check annotations', () => {
  it('none: no settings, the default TCP probe applies', () => {
    expect(resolve({}).healthCheck).toBeUndefined();
  });

  it('a path turns the HTTP probe on, with status range, host, interval and timeout', () => {
    const { healthCheck, warnings } = resolve({
      'clusterset-gateway.io/health-check-path': '/healthz?full=1',
      'clusterset-gateway.io/health-check-status': '200-204',
      'clusterset-gateway.io/health-check-host': 'web.shop',
      'clusterset-gateway.io/health-check-interval': '500ms',
      'clusterset-gateway.io/health-check-timeout': '1.5s',
    });
    expect(warnings).toEqual([]);
    expect(healthCheck).toEqual({
      kind: 'http',
      path: '/healthz?full=1',
      statusMin: 200,
      statusMax: 204,
      host: 'web.shop',
      intervalMs: 500,
      timeoutMs: 1500,
    });
  });

  it('works on a ServiceImport too; off disables the checks', () => {
    expect(resolve({ 'clusterset-gateway.io/health-check': 'off' }, 'ServiceImport').healthCheck).toEqual({
      disabled: true,
    });
    expect(resolve({ 'clusterset-gateway.io/health-check': 'http' }).healthCheck).toEqual({
      kind: 'http',
      path: '/',
    });
  });

  it.each([
    ['clusterset-gateway.io/health-check-path', 'healthz'],
    ['clusterset-gateway.io/health-check-interval', '-1'],
    ['clusterset-gateway.io/health-check-timeout', '0ms'],
    ['clusterset-gateway.io/health-check-status', 'abc'],
    ['clusterset-gateway.io/health-check-status', '300-200'],
    ['clusterset-gateway.io/health-check', 'grpc'],
    ['clusterset-gateway.io/health-check-host', 'a b'],
  ])('%s=%s is reported, listed in the dump and defaulted', (name, value) => {
    const { healthCheck, warnings } = resolve({ [name]: value });
    expect(warnings).toEqual([
      {
        code: 'InvalidHealthCheckAnnotation',
        owner: 'Service/shop/web',
        message: expect.stringContaining(`Service/shop/web:80: annotation ${name}="${value}"`),
      },
    ]);
    expect(healthCheck?.problems).toEqual([warnings[0]!.message]);
    expect(healthCheck?.intervalMs).toBeUndefined();
    expect(healthCheck?.path).toBeUndefined();
    expect(healthCheck?.statusMin).toBeUndefined();
    expect(healthCheck?.disabled).toBeUndefined();
  });

  it('a bad value costs only that field', () => {
    const { healthCheck } = resolve({
      'clusterset-gateway.io/health-check-path': '/ready',
      'clusterset-gateway.io/health-check-interval': 'soon',
    });
    expect(healthCheck).toMatchObject({ kind: 'http', path: '/ready' });
    expect(healthCheck?.problems).toHaveLength(1);
  });
});
