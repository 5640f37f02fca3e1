import type { UpstreamEndpoint } from '../../src/ir/route-table.ts';
import type { Balancer, BalancerFactory } from '../../src/lb/index.ts';

/**
 * Test double for proxy tests that are not about load balancing: round-robin over the nearest non-empty tier,
 * no health, no metrics. The proxy depends only on the BalancerFactory contract.
 */
export function createRoundRobinFactory(): BalancerFactory {
  return {
    build(cluster) {
      const endpoints: readonly UpstreamEndpoint[] = cluster.tiers.find((tier) => tier.length > 0) ?? [];
      let next = 0;
      const balancer: Balancer = {
        pick(tried) {
          for (let i = 0; i < endpoints.length; i++) {
            const endpoint = endpoints[(next + i) % endpoints.length]!;
            if (!tried?.has(endpoint.key)) {
              next = (next + i + 1) % endpoints.length;
              return endpoint;
            }
          }
          return undefined;
        },
        begin: () => () => {},
        start: (endpoint) => ({ endpoint }),
        end: () => {},
        describe: () => ({
          endpoints: endpoints.map((e) => ({ key: e.key, tier: 0, healthy: true, outstanding: 0 })),
          tierShares: [1],
        }),
      };
      return balancer;
    },
  };
}
