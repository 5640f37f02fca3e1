import type { SecureContext } from 'node:tls';
import type { Logger } from 'pino';
import type { PortConfig } from '../../ir/route-table.ts';
import { HostSelector } from './host-selector.ts';
import type { ContextMaterial, SecureContexts } from './secure-contexts.ts';

export interface CompiledTls {
  readonly contexts: HostSelector<SecureContext>;
  /** Used for clients that send no SNI: the first listener's certificates. */
  readonly fallback: ContextMaterial | undefined;
  /** Frontend client-certificate validation by listener hostname (Gateway.spec.tls.frontend). */
  readonly clientValidation: HostSelector<'AllowValidOnly' | 'AllowInsecureFallback' | 'None'>;
  /** Whether some listener of the port asks clients for a certificate. */
  readonly requestCert: boolean;
}

/** The certificates and client validation of an HTTPS port's listeners; undefined for plain HTTP. */
export function compileListenerTls(
  port: PortConfig,
  logger: Logger,
  secureContexts: SecureContexts,
): CompiledTls | undefined {
  if (port.protocol !== 'HTTPS') return undefined;
  const contexts = new HostSelector<SecureContext>();
  let fallback: CompiledTls['fallback'];
  const clientValidation = new HostSelector<'AllowValidOnly' | 'AllowInsecureFallback' | 'None'>();
  let requestCert = false;
  for (const listener of port.listeners) {
    const certificates = listener.tls?.certificates ?? [];
    if (certificates.length === 0) continue;
    const validation = listener.tls?.clientValidation;
    clientValidation.add(listener.hostname, validation?.mode ?? 'None');
    if (validation) requestCert = true;
    // Several certificateRefs (say RSA and ECDSA) become one context holding every pair.
    const material: ContextMaterial = {
      cert: certificates.map((c) => c.certPem),
      key: certificates.map((c) => c.keyPem),
      ...(validation ? { ca: validation.caPem } : {}),
    };
    try {
      contexts.add(listener.hostname, secureContexts.get(material));
      fallback ??= material;
    } catch (err) {
      logger.warn(
        { listener: listener.id, err: (err as Error).message },
        'listener certificate rejected; its hostname will not complete a TLS handshake',
      );
    }
  }
  return { contexts, fallback, clientValidation, requestCert };
}
