import { describe, expect, it } from 'vitest';
import { parseConnectAuthority } from '../../src/network/connect-authority.ts';
import { authorizePeer, certificateRefusal, clusterIdOf } from '../../src/network/peer-identity.ts';

describe('network gateway peers and CONNECT authorities', () => {
  it('a cluster SPIFFE ID is the one URI SAN of that form; none or two are no identity', () => {
    expect(clusterIdOf('DNS:gw.example, URI:spiffe://demo.local/cluster/east')).toEqual({
      trustDomain: 'demo.local',
      cluster: 'east',
    });
    expect(clusterIdOf('URI:spiffe://demo.local/ns/default/sa/web')).toBeUndefined();
    expect(clusterIdOf('URI:spiffe://Demo.local/cluster/east')).toBeUndefined();
    expect(
      clusterIdOf('URI:spiffe://demo.local/cluster/east, URI:spiffe://demo.local/cluster/west'),
    ).toBeUndefined();
    expect(clusterIdOf(undefined)).toBeUndefined();
  });

  it('authorizes by trust domain, then by the allowed clusters', () => {
    const policy = { trustDomain: 'demo.local', allowedClusters: new Set(['east']) };
    expect(authorizePeer('URI:spiffe://demo.local/cluster/east', policy).ok).toBe(true);
    expect(authorizePeer('URI:spiffe://other.local/cluster/east', policy)).toEqual({
      ok: false,
      reason: 'trust-domain',
    });
    expect(authorizePeer('URI:spiffe://demo.local/cluster/north', policy)).toEqual({
      ok: false,
      reason: 'cluster-not-allowed',
    });
    expect(authorizePeer('DNS:east', policy)).toEqual({ ok: false, reason: 'no-spiffe-id' });
    expect(authorizePeer('URI:spiffe://demo.local/cluster/north', { trustDomain: 'demo.local' }).ok).toBe(
      true,
    );
  });

  it("names why a certificate was not accepted from Node's verification result", () => {
    expect(certificateRefusal(false, undefined, false)).toBe('no-client-certificate');
    expect(certificateRefusal(false, 'CERT_HAS_EXPIRED', true)).toBe('certificate-expired');
    expect(certificateRefusal(false, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', true)).toBe('certificate-untrusted');
    expect(certificateRefusal(true, null, true)).toBeUndefined();
  });

  it('accepts only <svc>.<ns>.svc.clusterset.local:<port>', () => {
    expect(parseConnectAuthority('Web.Demo.svc.clusterset.local:80')).toEqual({
      ok: true,
      authority: 'web.demo.svc.clusterset.local:80',
    });
    const refused = (value: string | undefined) => {
      const verdict = parseConnectAuthority(value);
      return verdict.ok ? 'ok' : verdict.reason;
    };
    expect(refused(undefined)).toBe('missing-authority');
    expect(refused('10.0.0.1:80')).toBe('ip-authority');
    expect(refused('[fd00::1]:443')).toBe('ip-authority');
    expect(refused('web.demo.svc.clusterset.local')).toBe('bad-authority');
    expect(refused('web.demo.svc.clusterset.local:0')).toBe('bad-authority');
    expect(refused('web.demo.svc.clusterset.local:70000')).toBe('bad-authority');
    expect(refused('web.demo.svc.cluster.local:80')).toBe('bad-authority');
    expect(refused('evil.example:443')).toBe('bad-authority');
    expect(refused(`${'a'.repeat(400)}.demo.svc.clusterset.local:80`)).toBe('bad-authority');
  });
});
