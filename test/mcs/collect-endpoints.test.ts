import { describe, expect, it } from 'vitest';
import { collectEndpoints } from '../../src/mcs/endpoints.ts';
import type { EndpointSlice } from '../../src/snapshot/resources.ts';

const slice = (name: string, addresses: string[], ready = true): EndpointSlice => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv4',
  ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
  endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready } })),
});
const options = { owner: 'Service/shop/web:80', portName: 'http', warnOnDuplicate: true };

describe('collectEndpoints across snapshots', () => {
  it('keeps the endpoints of a slice that did not change as the same objects; a changed slice is read again', () => {
    const a = slice('web-a', ['10.0.0.1', '10.0.0.2']);
    const b = slice('web-b', ['10.0.1.1']);
    const first = collectEndpoints(
      [
        { slice: a, cluster: 'east' },
        { slice: b, cluster: 'east' },
      ],
      options,
    );
    const b2 = slice('web-b', ['10.0.1.9']);
    const second = collectEndpoints(
      [
        { slice: a, cluster: 'east' },
        { slice: b2, cluster: 'east' },
      ],
      options,
    );
    expect(second.endpoints.map((e) => e.key)).toEqual(['10.0.0.1:8080', '10.0.0.2:8080', '10.0.1.9:8080']);
    expect(second.endpoints[0]).toBe(first.endpoints[0]);
    expect(second.endpoints[1]).toBe(first.endpoints[1]);
    // The same slice seen from another cluster is other endpoints (their cluster differs).
    const elsewhere = collectEndpoints([{ slice: a, cluster: 'west' }], options);
    expect(elsewhere.endpoints.map((e) => e.cluster)).toEqual(['west', 'west']);
    expect(elsewhere.endpoints[0]).not.toBe(first.endpoints[0]);
  });

  it('still stands serving-terminating endpoints in only when no slice has a ready one', () => {
    const terminating: EndpointSlice = {
      ...slice('web-t', ['10.0.2.1'], false),
      endpoints: [
        { addresses: ['10.0.2.1'], conditions: { ready: false, serving: true, terminating: true } },
      ],
    };
    const ready = slice('web-r', ['10.0.3.1']);
    expect(collectEndpoints([{ slice: terminating, cluster: 'east' }], options).endpoints).toMatchObject([
      { key: '10.0.2.1:8080', ready: false },
    ]);
    expect(
      collectEndpoints(
        [
          { slice: terminating, cluster: 'east' },
          { slice: ready, cluster: 'east' },
        ],
        options,
      ).endpoints.map((e) => e.key),
    ).toEqual(['10.0.3.1:8080']);
  });
});
