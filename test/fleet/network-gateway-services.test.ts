import { describe, expect, it } from 'vitest';
import { networkGatewayProperties } from '../../src/fleet/network-gateway-services.ts';
import type { Service } from '../../src/snapshot/resources.ts';

const gatewayService = (name: string, labels: Record<string, string>, extra: Record<string, unknown>) =>
  ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'istio-system', labels },
    ...extra,
  }) as unknown as Service;

describe("a member's network gateways from its labelled Service", () => {
  it('load balancer ingress and externalIPs, on the port named network-gateway', () => {
    const service = gatewayService(
      'eastwest',
      { 'network.clusterset-gateway.io': 'net-west' },
      {
        spec: {
          type: 'LoadBalancer',
          ports: [
            { name: 'status', port: 15021 },
            { name: 'network-gateway', port: 15443 },
          ],
          externalIPs: ['203.0.113.9', 'not an ip'],
        },
        status: {
          loadBalancer: { ingress: [{ ip: '198.51.100.7' }, { hostname: 'gw.west.example' }, 'junk'] },
        },
      },
    );
    expect(networkGatewayProperties([service])).toEqual({
      'network.clusterset-gateway.io': 'net-west',
      'network-gateways.clusterset-gateway.io': '198.51.100.7:15443,gw.west.example:15443,203.0.113.9:15443',
    });
  });

  it('no labelled Service: nothing; a labelled one with no address yet: the network alone', () => {
    const plain = gatewayService('web', {}, { spec: { ports: [{ port: 80 }] } });
    expect(networkGatewayProperties([plain])).toEqual({});
    const pending = gatewayService(
      'eastwest',
      { 'network.clusterset-gateway.io': 'net-west' },
      { spec: { type: 'LoadBalancer', ports: [{ port: 15008 }] }, status: { loadBalancer: {} } },
    );
    expect(networkGatewayProperties([plain, pending])).toEqual({
      'network.clusterset-gateway.io': 'net-west',
    });
  });
});
