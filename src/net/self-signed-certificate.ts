import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SelfSignedCertificate {
  readonly certFile: string;
  readonly keyFile: string;
  readonly cert: string;
  readonly key: string;
}

/**
 * A self-signed EC P-256 certificate (what a current ACME issuer hands out by default) made by the openssl
 * command into `dir` as `<name>.crt` and `<name>.key`. `subjectAltNames` as openssl writes them:
 * `DNS:localhost`, `IP:127.0.0.1`.
 */
export function selfSignedCertificate(options: {
  readonly dir: string;
  readonly name: string;
  readonly commonName: string;
  readonly subjectAltNames: readonly string[];
  readonly days: number;
}): SelfSignedCertificate {
  const certFile = join(options.dir, `${options.name}.crt`);
  const keyFile = join(options.dir, `${options.name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      String(options.days),
      '-subj',
      `/CN=${options.commonName}`,
      '-addext',
      `subjectAltName=${options.subjectAltNames.join(',')}`,
    ],
    { stdio: 'ignore' },
  );
  return { certFile, keyFile, cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
}
