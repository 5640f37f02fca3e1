import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { BackendCluster } from '../../src/ir/route-table.ts';
import { createBalancerFactory } from '../../src/lb/index.ts';
import { compileBackends } from '../../src/proxy/compile/compile-backends.ts';
import { ProxyMetrics } from '../../src/proxy/compile/proxy-metrics.ts';

const backend = (name: string, addresses: string[]): BackendCluster => ({
  id: `Service/ns/${name}:80`,
  kind: 'Service',
  namespace: 'ns',
  name,
  port: 80,
  protocol: 'http1',
  trafficDistribution: 'Default',
  tiers: [
    addresses.map((address) => ({
      key: `${address}:8080`,
      address,
      port: 8080,
      cluster: 'east',
      zone: 'a',
      ready: true,
      weight: 1,
    })),
  ],
});

describe('compileBackends', () => {
  it('keeps the compiled form of every backend equal to the table in force, and compiles the changed ones', () => {
    const deps = { balancers: createBalancerFactory(), metrics: new ProxyMetrics(new Registry()) };
    const first = compileBackends([backend('api', ['10.0.0.1']), backend('web', ['10.0.0.2'])], deps);
    // A new translation makes new objects with the same content.
    const second = compileBackends(
      [backend('api', ['10.0.0.1']), backend('web', ['10.0.0.3'])],
      deps,
      first.backends,
    );
    expect(second.backends.get('Service/ns/api:80')).toBe(first.backends.get('Service/ns/api:80'));
    const web = second.backends.get('Service/ns/web:80');
    expect(web).not.toBe(first.backends.get('Service/ns/web:80'));
    expect(web?.cluster.tiers[0]?.[0]?.address).toBe('10.0.0.3');
    const pools = [...second.poolKeys].join(' ');
    expect(pools).toContain('10.0.0.3');
    expect(pools).toContain('10.0.0.1');
    expect(pools).not.toContain('10.0.0.2');
  });
});
