import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildKustomization } from './kustomize.ts';
import { at, DEPLOY_DIR, str } from './manifests.ts';

const [configMap] = buildKustomization(join(DEPLOY_DIR, 'coredns')).map((o) => o.object);
const corefile = str(at(configMap, 'data', 'clusterset.server')) ?? '';

/** The `match` regex and CNAME target of the first template; CoreDNS uses Go RE2, a subset JavaScript shares here. */
function template(): { match: RegExp; target: string; ttl: number } {
  const match = /match "([^"]+)"/.exec(corefile);
  const answer = /answer "\{\{ \.Name \}\} (\d+) IN CNAME ([^"]+)"/.exec(corefile);
  expect(match, 'template match line').not.toBeNull();
  expect(answer, 'template CNAME answer line').not.toBeNull();
  return { match: new RegExp(match![1]!), target: answer![2]!, ttl: Number(answer![1]) };
}

describe('CoreDNS stanza for clusterset.local', () => {
  it('is a ConfigMap CoreDNS imports as a server block (coredns-custom, *.server)', () => {
    expect(at(configMap, 'kind')).toBe('ConfigMap');
    expect(at(configMap, 'metadata', 'name')).toBe('coredns-custom');
    expect(at(configMap, 'metadata', 'namespace')).toBe('kube-system');
    expect(corefile).toMatch(/^clusterset\.local:53 \{\n/);
    // Balanced braces: a stray one would break the whole Corefile, and with it cluster DNS.
    expect(corefile.split('{').length).toBe(corefile.split('}').length);
  });

  it.each(['web.demo.svc.clusterset.local.', 'api-v2.team-a.svc.clusterset.local.'])('answers %s', (name) => {
    expect(template().match.test(name)).toBe(true);
  });

  it.each([
    'demo.svc.clusterset.local.',
    'a.web.demo.svc.clusterset.local.',
    'web.demo.svc.clusterset.local.evil.',
    '-web.demo.svc.clusterset.local.',
  ])('leaves %s to the NXDOMAIN template', (name) => {
    expect(template().match.test(name)).toBe(false);
  });

  it('points at the east-west Service that deploy/ installs, in the cluster.local domain', () => {
    const ew = buildKustomization(DEPLOY_DIR)
      .map((o) => o.object)
      .find((o) => o['kind'] === 'Service' && at(o, 'metadata', 'name') === 'clusterset-gateway-east-west');
    const fqdn = `${String(at(ew, 'metadata', 'name'))}.${String(at(ew, 'metadata', 'namespace'))}.svc.cluster.local.`;
    expect(template().target).toBe(fqdn);
    // A short TTL, so moving the Service (or switching to the DaemonSet variant) takes effect quickly.
    expect(template().ttl).toBeLessThanOrEqual(30);
  });

  it('leaves cluster.local to the cluster: only the clusterset.local zone is served or rewritten', () => {
    // Server block keys and plugin zones: a cluster.local one would take the cluster's own DNS away.
    const zones = [
      ...corefile.matchAll(
        /^\s*(?:([\w.-]+):53 \{|(?:template|rewrite|forward|hosts)\b[^\n]*?([\w.-]*cluster\.local)\b)/gm,
      ),
    ];
    expect(zones.map((m) => m[1] ?? m[2])).toEqual(['clusterset.local']);
    expect(corefile).not.toMatch(/(^|[\s"])(svc\.)?cluster\.local\.?\s*(\{|$)/m);
  });

  it('answers other clusterset.local names with NXDOMAIN rather than SERVFAIL', () => {
    expect(corefile).toMatch(/fallthrough/);
    expect(corefile).toMatch(/rcode NXDOMAIN/);
  });
});

describe('deploy/README.md', () => {
  it('shows the same CoreDNS block that the ConfigMap ships', () => {
    const readme = readFileSync(join(DEPLOY_DIR, 'README.md'), 'utf8');
    const block = /```\n(clusterset\.local:53 \{\n[\s\S]*?\n\})\n```/.exec(readme);
    expect(block?.[1]).toBe(corefile.trimEnd());
  });
});
