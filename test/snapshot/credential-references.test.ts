import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { credentialReferences } from '../../src/snapshot/credential-references.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';

const objects = (yaml: string): AnyResource[] => yaml.split(/^---$/m).map((doc) => parse(doc) as AnyResource);

describe('credentialReferences: the Secrets and ConfigMaps translation reads the data of', () => {
  it('collects listener certificates, the backend client certificate and CA bundles, in the right namespaces', () => {
    const refs = credentialReferences(
      objects(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: edge, namespace: infra }
spec:
  gatewayClassName: clusterset
  listeners:
    - name: https
      port: 443
      protocol: HTTPS
      tls:
        certificateRefs:
          - name: edge-cert
          - { group: "", kind: Secret, name: shared-cert, namespace: certs }
          - { group: cert-manager.io, kind: Certificate, name: not-a-secret }
  tls:
    backend: { clientCertificateRef: { name: client-cert } }
    frontend:
      default: { validation: { caCertificateRefs: [{ group: "", kind: ConfigMap, name: default-ca }] } }
      perPort:
        - port: 8443
          tls: { validation: { caCertificateRefs: [{ group: "", kind: ConfigMap, name: port-ca, namespace: cas }] } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: { name: team, namespace: team-a }
spec:
  parentRef: { name: edge, namespace: infra }
  listeners:
    - { name: https, port: 443, protocol: HTTPS, tls: { certificateRefs: [{ name: team-cert }] } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: { name: web, namespace: shop }
spec:
  targetRefs: [{ group: "", kind: Service, name: web }]
  validation:
    hostname: web
    caCertificateRefs: [{ group: "", kind: ConfigMap, name: web-ca }, { group: "", kind: Secret, name: wrong-kind }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ignored, namespace: shop }
spec: {}
`),
    );
    expect([...refs.secrets].sort()).toEqual([
      'certs/shared-cert',
      'infra/client-cert',
      'infra/edge-cert',
      'team-a/team-cert',
    ]);
    expect([...refs.configMaps].sort()).toEqual(['cas/port-ca', 'infra/default-ca', 'shop/web-ca']);
  });
});
