import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { selfSignedCertificate } from '../../src/net/self-signed-certificate.ts';

/**
 * The one self-signed certificate every TLS row uses (the gateway's Secret, nginx, haproxy and the HTTPS
 * backend), so that all of them do the same handshake and record work. Made with openssl at bench start.
 */
export interface BenchCertificate {
  readonly certFile: string;
  readonly keyFile: string;
  /** Certificate then key in one file, as haproxy's `crt` wants it. */
  readonly combinedFile: string;
  readonly certPem: string;
  readonly keyPem: string;
}

/**
 * The SNI every TLS client sends: wrk takes it from the URL's host, so it has to be a name that resolves to
 * 127.0.0.1 without any setup.
 */
export const TLS_SERVER_NAME = 'localhost';

/** EC P-256 (what a current ACME issuer hands out by default), valid one day. */
export async function makeBenchCertificate(): Promise<BenchCertificate> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-cert-'));
  const {
    certFile,
    keyFile,
    cert: certPem,
    key: keyPem,
  } = selfSignedCertificate({
    dir,
    name: 'bench',
    commonName: TLS_SERVER_NAME,
    subjectAltNames: [`DNS:${TLS_SERVER_NAME}`, 'DNS:bench.test', 'IP:127.0.0.1'],
    days: 1,
  });
  const combinedFile = join(dir, 'bench.pem');
  await writeFile(combinedFile, `${certPem}${keyPem}`);
  return { certFile, keyFile, combinedFile, certPem, keyPem };
}

/** Its folder, once the run no longer needs the files. */
export async function removeBenchCertificate(certificate: BenchCertificate): Promise<void> {
  await rm(dirname(certificate.certFile), { recursive: true, force: true });
}
