import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Pair {
  readonly cert: string;
  readonly key: string;
}

export interface TestPki {
  readonly dir: string;
  readonly ca: Pair;
  /** A CA nobody trusts, for "signed by another CA" cases. */
  readonly otherCa: Pair;
  /** Signs a leaf certificate with `ca` (or `otherCa`) for these SANs (`DNS:x`, `URI:y`). */
  leaf(name: string, sans: readonly string[], signer?: 'ca' | 'otherCa'): Pair;
}

function openssl(args: readonly string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

function read(dir: string, name: string): Pair {
  return {
    cert: readFileSync(join(dir, `${name}.crt`), 'utf8'),
    key: readFileSync(join(dir, `${name}.key`), 'utf8'),
  };
}

/** A throw-away PKI made with openssl (EC P-256 keys, one day), in a temp folder. */
export function makePki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'csg-tls-'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  for (const name of ['ca', 'other-ca']) {
    openssl(
      [
        'req',
        '-x509',
        ...ec,
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.crt`,
        '-days',
        '1',
        '-subj',
        `/CN=${name}`,
      ],
      dir,
    );
  }
  return {
    dir,
    ca: read(dir, 'ca'),
    otherCa: read(dir, 'other-ca'),
    leaf(name, sans, signer = 'ca') {
      const signerFile = signer === 'ca' ? 'ca' : 'other-ca';
      writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${sans.join(',')}\n`);
      openssl(['req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`], dir);
      openssl(
        [
          'x509',
          '-req',
          '-in',
          `${name}.csr`,
          '-CA',
          `${signerFile}.crt`,
          '-CAkey',
          `${signerFile}.key`,
          '-CAcreateserial',
          '-out',
          `${name}.crt`,
          '-days',
          '1',
          '-extfile',
          `${name}.ext`,
        ],
        dir,
      );
      return read(dir, name);
    },
  };
}
