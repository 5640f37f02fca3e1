import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { CliOptions } from '../cli/args.ts';
import type { FleetMembership } from '../fleet/fleet-membership.ts';
import { readProviderFile } from '../fleet/provider-file.ts';
import type { Source } from '../snapshot/source.ts';

/**
 * The fleet's members from the flags (`--clusterprofile-provider-file`, `--member-kubeconfigs`), or undefined
 * when neither is given. A provider file that cannot be read or parsed stops the start, naming the field.
 * The membership is loaded only in fleet mode: members' watches, exec credentials and their Reflectors are code
 * a gateway without members never runs.
 */
export async function fleetMembersFromFlags(
  cli: CliOptions,
  logger: Logger,
  registry?: Registry,
): Promise<FleetMembership | undefined> {
  const fleet = cli.fleet;
  if (!fleet) return undefined;
  const providers = fleet.providerFile !== undefined ? readProviderFile(fleet.providerFile) : undefined;
  logger.info(
    { providers: providers ? [...providers.keys()] : [], kubeconfigDir: fleet.kubeconfigDir },
    'fleet mode: reading member clusters',
  );
  const { FleetMembership } = await import('../fleet/fleet-membership.ts');
  return new FleetMembership({
    logger,
    ...(providers ? { providers } : {}),
    ...(fleet.kubeconfigDir !== undefined ? { kubeconfigDir: fleet.kubeconfigDir } : {}),
    timing: { execTimeoutMs: fleet.execTimeoutMs },
    ...(registry ? { registry } : {}),
  });
}

/**
 * The gateway's own source, with every Snapshot's ClusterProfiles (from the hub it watches or the manifests
 * folder) handed to the membership before the Snapshot goes on.
 */
export function feedingClusterProfiles(source: Source, membership: FleetMembership): Source {
  return {
    name: source.name,
    start: (onSnapshot) =>
      source.start((snapshot) => {
        membership.setClusterProfiles(snapshot.list('ClusterProfile'));
        onSnapshot(snapshot);
      }),
    stop: () => source.stop(),
  };
}
