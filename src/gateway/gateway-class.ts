import type { StatusUpdate } from '../ir/status.ts';
import type { GatewayClass } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { condition, generationOf } from './conditions.ts';
import type { TranslateOptions } from './options.ts';
import { supportedFeatures } from './supported-features.ts';

export interface GatewayClassVerdict {
  readonly accepted: boolean;
  readonly message: string;
}

export interface GatewayClassResult {
  /** Our GatewayClasses by name; Gateways of any other class are not ours and are left alone. */
  readonly ours: ReadonlyMap<string, GatewayClassVerdict>;
  readonly statuses: readonly StatusUpdate[];
}

/**
 * GatewayClass acceptance: a class is ours when `spec.controllerName` equals ours. We take no parameters,
 * so any `parametersRef` is InvalidParameters (GatewayClassConditionReason), and the class is not Accepted.
 */
export function reconcileGatewayClasses(snapshot: Snapshot, options: TranslateOptions): GatewayClassResult {
  const ours = new Map<string, GatewayClassVerdict>();
  const statuses: StatusUpdate[] = [];
  for (const gatewayClass of snapshot.gatewayClasses) {
    if (gatewayClass.spec?.controllerName !== options.controllerName) continue;
    const verdict = judge(gatewayClass);
    ours.set(gatewayClass.metadata.name, verdict);
    const generation = generationOf(gatewayClass);
    statuses.push({
      kind: 'GatewayClass',
      name: gatewayClass.metadata.name,
      generation,
      status: {
        conditions: [
          condition(
            'Accepted',
            verdict.accepted,
            verdict.accepted ? 'Accepted' : 'InvalidParameters',
            verdict.message,
            generation,
          ),
          condition('SupportedVersion', true, 'SupportedVersion', 'Gateway API v1 is supported', generation),
        ],
        supportedFeatures: supportedFeatures(options.eastWest).map((name) => ({ name })),
      },
    });
  }
  return { ours, statuses };
}

function judge(gatewayClass: GatewayClass): GatewayClassVerdict {
  const ref = gatewayClass.spec?.parametersRef;
  if (!ref) return { accepted: true, message: 'GatewayClass is accepted' };
  const target = `${ref.group || 'core'}/${ref.kind ?? ''} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name ?? ''}`;
  return {
    accepted: false,
    message: `spec.parametersRef ${target}: this controller supports no parameters kind`,
  };
}
