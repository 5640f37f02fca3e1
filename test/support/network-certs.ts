import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const SCRIPT = resolve(import.meta.dirname, '../../scripts/network-certs.sh');

export interface NetworkIdentityFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly trustBundleFile: string;
}

/** A trust domain made by scripts/network-certs.sh (the documented openssl lines): ca.crt, <cluster>.crt/.key. */
export function makeTrustDomain(dir: string, domain: string, clusters: readonly string[]): void {
  execFileSync('sh', [SCRIPT, dir, domain, ...clusters], { stdio: 'ignore' });
}

export function identityFiles(dir: string, cluster: string): NetworkIdentityFiles {
  return {
    certFile: join(dir, `${cluster}.crt`),
    keyFile: join(dir, `${cluster}.key`),
    trustBundleFile: join(dir, 'ca.crt'),
  };
}

export function networkTlsArgs(files: NetworkIdentityFiles): string[] {
  return [
    '--network-tls-cert',
    files.certFile,
    '--network-tls-key',
    files.keyFile,
    '--network-trust-bundle',
    files.trustBundleFile,
  ];
}

/**
 * One more certificate signed by the CA in `caDir`, with any URI SAN and validity (`days: -1` is already
 * expired): the bad peers of the tests. Written as `<name>.crt` and `<name>.key` in `caDir`.
 */
export function signedCertificate(
  caDir: string,
  name: string,
  uri: string,
  days: number,
): { cert: string; key: string } {
  const key = join(caDir, `${name}.key`);
  const csr = join(caDir, `${name}.csr`);
  const ext = join(caDir, `${name}.ext`);
  const crt = join(caDir, `${name}.crt`);
  execFileSync(
    'openssl',
    [
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      csr,
      '-subj',
      `/CN=${name}`,
    ],
    { stdio: 'ignore' },
  );
  writeFileSync(ext, `subjectAltName=URI:${uri}\nextendedKeyUsage=serverAuth,clientAuth\n`);
  execFileSync(
    'openssl',
    [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      join(caDir, 'ca.crt'),
      '-CAkey',
      join(caDir, 'ca.key'),
      '-CAcreateserial',
      '-days',
      String(days),
      '-extfile',
      ext,
      '-out',
      crt,
    ],
    { stdio: 'ignore' },
  );
  return { cert: readFileSync(crt, 'utf8'), key: readFileSync(key, 'utf8') };
}
