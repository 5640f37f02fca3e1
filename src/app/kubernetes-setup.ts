import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { CliOptions } from '../cli/args.ts';
import type { NetworkIdentityRefs } from '../gateway/network-identity.ts';
import { createStatusWriter, type StatusWriter, startLeaderElection } from '../kube/index.ts';
import type { CredentialReferences } from '../snapshot/credential-references.ts';
import { createKubeSource, loadKubeConfig } from '../sources/kube/index.ts';
import type { SourceSetup } from './source-setup-contract.ts';

/** The network gateway's own Secret and trust bundle: their data is kept though no Gateway names them. */
function ownCredentials(refs: NetworkIdentityRefs): CredentialReferences {
  return {
    secrets: new Set([refs.secret]),
    configMaps: new Set(refs.trustBundleConfigMap !== undefined ? [refs.trustBundleConfigMap] : []),
  };
}

/** The coordination.k8s.io/v1 Lease every replica campaigns for; only its holder writes status. */
const LEADER_LEASE_NAME = 'clusterset-gateway-leader';

/**
 * The Kubernetes half: informers, a status writer that only writes while this replica holds the Lease, and
 * the election itself. Every replica serves traffic (issue 4).
 */
export function kubernetesSetup(
  cli: CliOptions,
  kubeconfig: string | undefined,
  logger: Logger,
  registry: Registry,
): SourceSetup {
  const { kubeConfig, namespace, origin } = loadKubeConfig(kubeconfig);
  logger.info({ origin, namespace }, 'using Kubernetes API server');
  const instance = process.env.POD_NAME || `${hostname()}-${process.pid}`;
  const source = createKubeSource({
    kubeConfig,
    logger,
    registry,
    debounceMs: cli.limits.changeDebounceMs,
    maxDebounceMs: cli.limits.maxChangeDelayMs,
    endpointDebounceMs: cli.limits.endpointDebounceMs,
    ...(cli.serviceImportKinds ? { serviceImportKinds: cli.serviceImportKinds } : {}),
    ...(cli.network.tlsObjects ? { ownCredentials: ownCredentials(cli.network.tlsObjects) } : {}),
  });
  // Declared before the elector so that its callback can reach it; it fires only after the first renewal.
  let statusWriter: StatusWriter | undefined;
  const elector = startLeaderElection({
    kubeConfig,
    namespace: process.env.POD_NAMESPACE || namespace,
    name: LEADER_LEASE_NAME,
    identity: instance,
    logger,
    registry,
    onStartedLeading: () => void statusWriter?.rewrite(),
  });
  const writer = createStatusWriter({
    kubeConfig,
    controllerName: cli.controllerName,
    logger,
    registry,
    isLeader: () => elector.isLeader,
    instance,
    qps: cli.statusWriteQps,
    burst: cli.statusWriteBurst,
  });
  statusWriter = writer;
  return {
    source,
    identity: cli.identity,
    serviceImportKinds: () => source.servedServiceImportKinds,
    notReady: () =>
      source.ready ? [] : ['the Kubernetes source has not synced every watched kind', ...source.problems],
    problems: () => source.problems,
    onApplied: (result) => writer.write(result.statuses),
    adminRoutes: new Map(),
    async close() {
      writer.stop();
      await elector.stop();
    },
  };
}
