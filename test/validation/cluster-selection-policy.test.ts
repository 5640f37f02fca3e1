import { describe, expect, it } from 'vitest';
import { loadCrdChannel } from '../../src/validation/crd-loader.ts';
import { CrdValidator } from '../../src/validation/index.ts';

/** The ClusterSelectionPolicy CRD refuses what its schema and CEL rules refuse, as kube-apiserver would. */
const validator = new CrdValidator(loadCrdChannel('standard'));

const policy = (spec: Record<string, unknown>) => ({
  apiVersion: 'policy.clusterset-gateway.io/v1alpha1',
  kind: 'ClusterSelectionPolicy',
  metadata: { name: 'p', namespace: 'shop' },
  spec,
});
const target = [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web' }];
const errorsOf = (spec: Record<string, unknown>) =>
  validator.validate(policy(spec)).errors.map((e) => `${e.field}: ${e.message}`);

describe('the ClusterSelectionPolicy CRD', () => {
  it('accepts a policy and defaults fallback to None', () => {
    const result = validator.validate(
      policy({ targetRefs: target, tiers: [{ name: 'local', sameCluster: true }] }),
    );
    expect(result.errors).toEqual([]);
    expect((result.object['spec'] as { fallback: string }).fallback).toBe('None');
    expect((result.object['spec'] as { sessionPinning: string }).sessionPinning).toBe('Endpoint');
  });

  it('accepts sessionPinning Cluster', () => {
    const result = validator.validate(
      policy({
        targetRefs: target,
        tiers: [{ name: 'local', sameCluster: true }],
        sessionPinning: 'Cluster',
      }),
    );
    expect(result.errors).toEqual([]);
    expect((result.object['spec'] as { sessionPinning: string }).sessionPinning).toBe('Cluster');
  });

  it.each([
    [
      'a tier with two selectors',
      { targetRefs: target, tiers: [{ name: 'a', sameCluster: true, clusters: ['x'] }] },
      /exactly one way/,
    ],
    ['a tier with no selector', { targetRefs: target, tiers: [{ name: 'a' }] }, /exactly one way/],
    [
      'a target of another kind',
      {
        targetRefs: [{ group: 'apps', kind: 'Deployment', name: 'w' }],
        tiers: [{ name: 'a', sameCluster: true }],
      },
      /names a Service/,
    ],
    [
      'two tiers of one name',
      {
        targetRefs: target,
        tiers: [
          { name: 'a', sameCluster: true },
          { name: 'a', clusters: ['x'] },
        ],
      },
      /Duplicate value/,
    ],
    [
      'an overprovisioning factor under 100%',
      { targetRefs: target, tiers: [{ name: 'a', sameCluster: true, overprovisioningFactor: 50 }] },
      /greater than or equal to 100/,
    ],
    [
      'an unknown fallback',
      { targetRefs: target, tiers: [{ name: 'a', sameCluster: true }], fallback: 'Sometimes' },
      /Unsupported value/,
    ],
    ['no tiers', { targetRefs: target, tiers: [] }, /at least 1 item/],
    [
      'an unknown sessionPinning',
      { targetRefs: target, tiers: [{ name: 'a', sameCluster: true }], sessionPinning: 'Zone' },
      /Unsupported value/,
    ],
  ])('refuses %s', (_name, spec, message) => {
    expect(errorsOf(spec).join('\n')).toMatch(message);
  });
});
