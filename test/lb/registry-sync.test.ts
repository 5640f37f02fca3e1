import { describe, expect, it } from 'vitest';
import { createBalancerFactory } from '../../src/lb/index.ts';
import { backend } from './fixtures.ts';

const rows = (...keys: string[]) => [keys.map((key) => ({ key, cluster: 'east', zone: 'a' }))];

describe('a new endpoint set for a backend (health registry sync)', () => {
  it('keeps the state of endpoints still there, forgets removed ones and adds new ones', () => {
    const factory = createBalancerFactory();
    factory.build(backend(rows('10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80')));
    // Endpoint 1 fails its probes until it is unhealthy.
    for (let i = 0; i < 10; i++)
      factory.recordProbe('ServiceImport/shop/cart:80', '10.0.0.1:80', false, 'tcp');
    expect(factory.healthyEndpoints()).toMatchObject([{ healthy: 2, total: 3 }]);
    // 3 leaves, 4 comes: 1 is still unhealthy, 4 starts healthy.
    factory.build(backend(rows('10.0.0.1:80', '10.0.0.2:80', '10.0.0.4:80')));
    expect(factory.healthyEndpoints()).toMatchObject([{ healthy: 2, total: 3 }]);
    factory.build(backend(rows('10.0.0.2:80')));
    expect(factory.healthyEndpoints()).toMatchObject([{ healthy: 1, total: 1 }]);
    // An endpoint that comes back is new: its old verdict was forgotten with it.
    factory.build(backend(rows('10.0.0.1:80', '10.0.0.2:80')));
    expect(factory.healthyEndpoints()).toMatchObject([{ healthy: 2, total: 2 }]);
  });
});
