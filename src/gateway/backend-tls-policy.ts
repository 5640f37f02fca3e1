import { type BackendCluster, type BackendTls, backendOwner } from '../ir/route-table.ts';
import type { PolicyStatus, StatusUpdate } from '../ir/status.ts';
import { serviceImportSpec } from '../mcs/service-import-spec.ts';
import { compareStrings } from '../snapshot/object-order.ts';
import type { BackendTLSPolicy, Condition } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { condition, generationOf, type Problem } from './conditions.ts';
import { GATEWAY_GROUP, keyOf, namespaceOf } from './defaults.ts';
import type { TranslateOptions } from './options.ts';
import { resolveCaBundle } from './tls-ca-bundles.ts';

export type PolicyVerdict =
  | { readonly ok: true; readonly tls: BackendTls }
  | {
      readonly ok: false;
      readonly accepted: Problem<'NoValidCACertificate' | 'Conflicted' | 'Invalid'>;
      readonly resolvedRefs: Problem<'InvalidCACertificateRef' | 'InvalidKind'> | undefined;
    };

export interface BackendTlsPolicies {
  /** The policy that applies to a BackendCluster (by its id), and whether it is usable. */
  forBackend(
    cluster: BackendCluster,
  ): { readonly policy: string; readonly verdict: PolicyVerdict } | undefined;
  /** Policy statuses, given the Gateways (`namespace/name`) that use each backend owner (`Kind/namespace/name`). */
  statuses(gatewaysByOwner: ReadonlyMap<string, ReadonlySet<string>>, controllerName: string): StatusUpdate[];
}

interface Candidate {
  readonly policy: BackendTLSPolicy;
  readonly key: string;
  readonly verdict: PolicyVerdict;
  /** `Kind/namespace/name` of each target, and its sectionName (undefined: every port). */
  readonly targets: readonly { readonly object: string; readonly sectionName: string | undefined }[];
}

/**
 * BackendTLSPolicy (GEP-1897, v1): a policy targets Services (or ServiceImports) and, with sectionName, one
 * named port. For one port, a policy naming the port beats one naming the whole Service; among policies with
 * the same target the oldest wins (then `namespace/name`), the others are Conflicted. A policy whose CA
 * certificates do not resolve is Accepted=False (NoValidCACertificate) and its backends are never reached in
 * plain text: translation turns them into invalid backends (500).
 */
export function resolveBackendTlsPolicies(snapshot: Snapshot, options: TranslateOptions): BackendTlsPolicies {
  const policies = [...snapshot.list('BackendTLSPolicy')].sort(
    (a, b) =>
      compareStrings(a.metadata.creationTimestamp ?? '', b.metadata.creationTimestamp ?? '') ||
      compareStrings(keyOf(a), keyOf(b)),
  );
  const importKinds = options.serviceImportKinds;
  const candidates: Candidate[] = policies.map((policy) => ({
    policy,
    key: keyOf(policy),
    verdict: validatePolicy(snapshot, policy),
    targets: (policy.spec?.targetRefs ?? []).flatMap((ref) => {
      const group = ref.group ?? '';
      const kind = ref.kind ?? 'Service';
      const supported =
        (group === '' && kind === 'Service') || importKinds.some((k) => k.group === group && k.kind === kind);
      if (!supported) return [];
      const objectKind = kind === 'Service' ? 'Service' : 'ServiceImport';
      return [{ object: `${objectKind}/${namespaceOf(policy)}/${ref.name}`, sectionName: ref.sectionName }];
    }),
  }));
  // The winner per exact target (object + sectionName); later candidates for the same target are Conflicted.
  const winners = new Map<string, Candidate>();
  const conflicted = new Set<string>();
  for (const candidate of candidates) {
    for (const target of candidate.targets) {
      const id = `${target.object}#${target.sectionName ?? ''}`;
      const first = winners.get(id);
      if (first === undefined) winners.set(id, candidate);
      else if (first !== candidate) conflicted.add(candidate.key);
    }
  }
  const verdictOf = (candidate: Candidate): PolicyVerdict =>
    conflicted.has(candidate.key)
      ? {
          ok: false,
          accepted: {
            reason: 'Conflicted',
            message: 'an older BackendTLSPolicy targets the same Service port',
          },
          resolvedRefs: undefined,
        }
      : candidate.verdict;

  return {
    forBackend(cluster) {
      const object = backendOwner(cluster);
      const portName = servicePortName(snapshot, cluster);
      const winner =
        (portName !== undefined ? winners.get(`${object}#${portName}`) : undefined) ??
        winners.get(`${object}#`);
      if (winner === undefined || conflicted.has(winner.key)) return undefined;
      return { policy: winner.key, verdict: winner.verdict };
    },
    statuses(gatewaysByOwner, controllerName) {
      return candidates.map((candidate) => {
        const generation = generationOf(candidate.policy);
        const gateways = new Set<string>();
        for (const target of candidate.targets)
          for (const gateway of gatewaysByOwner.get(target.object) ?? []) gateways.add(gateway);
        const conditions = policyConditions(verdictOf(candidate), generation);
        const status: PolicyStatus = {
          ancestors: [...gateways].sort().map((gateway) => {
            const [namespace, name] = gateway.split('/') as [string, string];
            return {
              ancestorRef: { group: GATEWAY_GROUP, kind: 'Gateway', namespace, name },
              controllerName,
              conditions,
            };
          }),
        };
        return {
          kind: 'BackendTLSPolicy' as const,
          namespace: namespaceOf(candidate.policy),
          name: candidate.policy.metadata.name,
          generation,
          status,
        };
      });
    },
  };
}

function policyConditions(verdict: PolicyVerdict, generation: number): Condition[] {
  if (verdict.ok) {
    return [
      condition('Accepted', true, 'Accepted', 'policy is accepted', generation),
      condition('ResolvedRefs', true, 'ResolvedRefs', 'CA certificates are resolved', generation),
    ];
  }
  const refs = verdict.resolvedRefs;
  return [
    condition('Accepted', false, verdict.accepted.reason, verdict.accepted.message, generation),
    refs
      ? condition('ResolvedRefs', false, refs.reason, refs.message, generation)
      : condition('ResolvedRefs', true, 'ResolvedRefs', 'CA certificates are resolved', generation),
  ];
}

function validatePolicy(snapshot: Snapshot, policy: BackendTLSPolicy): PolicyVerdict {
  const validation = policy.spec?.validation;
  const serverName = validation?.hostname?.toLowerCase();
  if (!serverName) {
    return {
      ok: false,
      accepted: { reason: 'Invalid', message: 'spec.validation.hostname is required' },
      resolvedRefs: undefined,
    };
  }
  const subjectAltNames = (validation?.subjectAltNames ?? []).flatMap(
    (san): BackendTls['subjectAltNames'][number][] =>
      san.type === 'URI' && san.uri
        ? [{ type: 'URI' as const, value: san.uri }]
        : san.hostname
          ? [{ type: 'Hostname' as const, value: san.hostname.toLowerCase() }]
          : [],
  );
  const refs = validation?.caCertificateRefs ?? [];
  if (refs.length === 0) {
    if (validation?.wellKnownCACertificates === 'System') {
      return { ok: true, tls: { policy: keyOf(policy), serverName, subjectAltNames } };
    }
    const message = 'spec.validation needs caCertificateRefs or wellKnownCACertificates: System';
    return {
      ok: false,
      accepted: { reason: 'NoValidCACertificate', message },
      resolvedRefs: { reason: 'InvalidCACertificateRef', message },
    };
  }
  const bundle = resolveCaBundle(snapshot, refs, 'spec.validation.caCertificateRefs', {
    kind: 'BackendTLSPolicy',
    namespace: namespaceOf(policy),
  });
  if (!bundle.ok) {
    return {
      ok: false,
      accepted: { reason: 'NoValidCACertificate', message: bundle.message },
      resolvedRefs: {
        reason: bundle.reason === 'InvalidKind' ? 'InvalidKind' : 'InvalidCACertificateRef',
        message: bundle.message,
      },
    };
  }
  return { ok: true, tls: { policy: keyOf(policy), serverName, caPem: bundle.caPem, subjectAltNames } };
}

/** The name of the Service (or ServiceImport) port a BackendCluster sends to; policies' sectionName names it. */
function servicePortName(snapshot: Snapshot, cluster: BackendCluster): string | undefined {
  if (cluster.kind === 'Service') {
    return snapshot
      .get('Service', cluster.namespace, cluster.name)
      ?.spec?.ports?.find((p) => p.port === cluster.port)?.name;
  }
  const imported = snapshot.get('ServiceImport', cluster.namespace, cluster.name);
  return imported ? serviceImportSpec(imported).ports?.find((p) => p.port === cluster.port)?.name : undefined;
}
