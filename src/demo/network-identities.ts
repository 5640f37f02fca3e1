import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The demo's trust domain: every cluster's network gateway certificate names `spiffe://<it>/cluster/<cluster>`. */
export const DEMO_TRUST_DOMAIN = 'demo.clusterset.local';

export interface NetworkIdentityFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly trustBundleFile: string;
}

/**
 * A demo trust domain made with openssl at start, as scripts/network-certs.sh makes one (docs/multi-network.md):
 * a CA (the trust bundle) and one certificate per cluster whose only URI SAN is its cluster SPIFFE ID. A real
 * fleet takes these from its PKI; the demo's live in its temporary folder and go with it.
 */
export function makeDemoTrustDomain(
  dir: string,
  clusters: readonly string[],
): ReadonlyMap<string, NetworkIdentityFiles> {
  const ca = { cert: join(dir, 'network-ca.crt'), key: join(dir, 'network-ca.key') };
  const openssl = (args: readonly string[]) => {
    try {
      execFileSync('openssl', args, { stdio: 'ignore' });
    } catch (error) {
      throw new Error(
        `the demo's network gateway certificates are made by the openssl command, which failed (${
          (error as Error).message
        }); install openssl (Debian: apt-get install openssl)`,
      );
    }
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl([
    'req',
    '-x509',
    ...ec,
    '-keyout',
    ca.key,
    '-out',
    ca.cert,
    '-days',
    '30',
    '-subj',
    `/CN=${DEMO_TRUST_DOMAIN} network CA`,
  ]);
  const out = new Map<string, NetworkIdentityFiles>();
  for (const cluster of clusters) {
    const base = join(dir, `network-${cluster}`);
    const files = { certFile: `${base}.crt`, keyFile: `${base}.key`, trustBundleFile: ca.cert };
    writeFileSync(
      `${base}.ext`,
      `subjectAltName=URI:spiffe://${DEMO_TRUST_DOMAIN}/cluster/${cluster}\nextendedKeyUsage=serverAuth,clientAuth\n`,
    );
    openssl(['req', ...ec, '-keyout', files.keyFile, '-out', `${base}.csr`, '-subj', `/CN=${cluster}`]);
    openssl([
      'x509',
      '-req',
      '-in',
      `${base}.csr`,
      '-CA',
      ca.cert,
      '-CAkey',
      ca.key,
      '-CAcreateserial',
      '-days',
      '30',
      '-extfile',
      `${base}.ext`,
      '-out',
      files.certFile,
    ]);
    rmSync(`${base}.csr`);
    rmSync(`${base}.ext`);
    out.set(cluster, files);
  }
  return out;
}
