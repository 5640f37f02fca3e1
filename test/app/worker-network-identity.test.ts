import { describe, expect, it } from 'vitest';
import { identityKey, worstNetworkIdentity } from '../../src/app/worker-network-identity.ts';

const loaded = (notAfter: string, problems: string[] = []) => ({
  source: 'Secret net/id',
  id: 'spiffe://demo.local/cluster/west',
  notAfter,
  expiresInSeconds: 100,
  problems,
});
const none = { source: 'Secret net/id', problems: ['network identity: Secret net/id not found'] };

describe('worstNetworkIdentity: the workers report that speaks for all', () => {
  it('is undefined with no reports (no multi-network, or no worker reported yet)', () => {
    expect(worstNetworkIdentity([])).toBeUndefined();
  });

  it('prefers a worker with nothing loaded over one that has a certificate', () => {
    expect(worstNetworkIdentity([loaded('2027-01-01T00:00:00.000Z'), none])).toBe(none);
    expect(worstNetworkIdentity([none, loaded('2027-01-01T00:00:00.000Z')])).toBe(none);
  });

  it('then a worker with problems, then the certificate that ends first', () => {
    const refused = loaded('2027-06-01T00:00:00.000Z', ['network certificate not (re)loaded: ...']);
    const early = loaded('2027-01-01T00:00:00.000Z');
    const late = loaded('2027-03-01T00:00:00.000Z');
    expect(worstNetworkIdentity([early, refused, late])).toBe(refused);
    expect(worstNetworkIdentity([late, early])).toBe(early);
    expect(worstNetworkIdentity([early, late])).toBe(early);
  });
});

describe('identityKey', () => {
  it('ignores the seconds left, and nothing else', () => {
    const a = loaded('2027-01-01T00:00:00.000Z');
    expect(identityKey({ ...a, expiresInSeconds: 5 })).toBe(identityKey(a));
    expect(identityKey({ ...a, problems: ['x'] })).not.toBe(identityKey(a));
    expect(identityKey(loaded('2027-01-02T00:00:00.000Z'))).not.toBe(identityKey(a));
  });
});
