import type { TranslationResult } from '../gateway/translate.ts';
import type { RouteTable } from '../ir/route-table.ts';
import type { GatewayStatus, ListenerSetStatus, ListenerStatus, StatusUpdate } from '../ir/status.ts';
import type { ListenerBinding } from '../proxy/index.ts';
import type { Condition } from '../snapshot/resources.ts';

/**
 * Gateway API's reason for a listener whose port cannot be used ("the port is already in use", GEP-1364's
 * ListenerReasonPortUnavailable). The spec gives it to Accepted; here the configuration is accepted and it is
 * the data plane that cannot serve it, so it is Programmed that turns False with it.
 */
export const PORT_UNAVAILABLE = 'PortUnavailable';

/**
 * Translation's statuses with what the data plane could not do laid over them: a listener whose socket is not
 * bound is Programmed=False (PortUnavailable, the OS error and the address in the message), and so is its
 * Gateway (or ListenerSet). Runtime state is applied here, where statuses are published, and never flows back
 * into translation. The same result is returned when every socket is bound.
 */
export function withListenerBindings(
  result: TranslationResult,
  bindings: readonly ListenerBinding[],
): TranslationResult {
  const unbound = unboundListeners(result.table, bindings);
  if (unbound.size === 0) return result;
  return { ...result, statuses: result.statuses.map((update) => overlay(update, unbound)) };
}

/** One line per socket that is not bound, for /config_dump's problems. */
export function listenerProblems(
  table: RouteTable | undefined,
  bindings: readonly ListenerBinding[],
): string[] {
  return bindings
    .filter((b) => !b.bound)
    .map((b) => {
      const ids = table ? listenerIdsOf(table, b) : [];
      const what =
        b.kind === 'east-west'
          ? `east-west listener ${b.endpoint}`
          : `${KIND_PREFIX[b.kind]}listener port ${b.port} at ${b.endpoint}${ids.length > 0 ? ` (${ids.join(', ')})` : ''}`;
      return `error: ${what} cannot be bound: ${b.error ?? b.code}; tried again with backoff`;
    });
}

/** Readiness: every configured listening socket (Gateway ports, TLS ports, east-west) must be bound. */
export function listenerReadiness(bindings: readonly ListenerBinding[]): string[] {
  return bindings
    .filter((b) => !b.bound)
    .map(
      (b) =>
        `${b.kind === 'east-west' ? 'east-west listener' : `listener port ${b.port}`} not bound at ${b.endpoint}: ${b.code}`,
    );
}

/** Gateway listener ids (`ns/gateway/name`, `ns/gateway/set-ns/set/name`) whose socket is not bound. */
function unboundListeners(
  table: RouteTable,
  bindings: readonly ListenerBinding[],
): Map<string, ListenerBinding> {
  const out = new Map<string, ListenerBinding>();
  for (const binding of bindings) {
    if (binding.bound || binding.kind === 'east-west') continue;
    for (const id of listenerIdsOf(table, binding)) out.set(id, binding);
  }
  return out;
}

const KIND_PREFIX: Readonly<Record<ListenerBinding['kind'], string>> = {
  http: '',
  tls: 'TLS ',
  tcp: 'TCP ',
  udp: 'UDP ',
  'east-west': '',
};

function listenerIdsOf(table: RouteTable, binding: ListenerBinding): string[] {
  if (binding.kind === 'east-west') return [];
  if (binding.kind === 'tcp' || binding.kind === 'udp') {
    const protocol = binding.kind === 'tcp' ? 'TCP' : 'UDP';
    return (table.layer4Ports ?? [])
      .filter((p) => p.protocol === protocol && p.port === binding.port && p.address === binding.address)
      .map((p) => p.listener);
  }
  const ports = binding.kind === 'http' ? table.ports : (table.tlsPorts ?? []);
  return ports
    .filter((p) => p.port === binding.port && p.address === binding.address)
    .flatMap((p) => p.listeners.map((l) => l.id));
}

function overlay(update: StatusUpdate, unbound: ReadonlyMap<string, ListenerBinding>): StatusUpdate {
  if (update.kind !== 'Gateway' && update.kind !== 'ListenerSet') return update;
  const status = update.status as GatewayStatus | ListenerSetStatus;
  // A ListenerSet listener's id is `<gateway ns>/<gateway>/<set ns>/<set>/<name>`: the set's part identifies it.
  const idOf = (name: string): string[] =>
    update.kind === 'Gateway'
      ? [`${update.namespace}/${update.name}/${name}`]
      : [...unbound.keys()].filter((id) => id.endsWith(`/${update.namespace}/${update.name}/${name}`));
  const failed: { name: string; binding: ListenerBinding }[] = [];
  const listeners = status.listeners.map((listener): ListenerStatus => {
    const binding = idOf(listener.name)
      .map((id) => unbound.get(id))
      .find((b) => b !== undefined);
    if (binding === undefined) return listener;
    failed.push({ name: listener.name, binding });
    return {
      ...listener,
      conditions: notProgrammed(
        listener.conditions,
        `listener ${listener.name} is not served: ${describe(binding)}`,
      ),
    };
  });
  if (failed.length === 0) return update;
  const message = failed.map((f) => `listener ${f.name}: ${describe(f.binding)}`).join('; ');
  return {
    ...update,
    status: { ...status, conditions: notProgrammed(status.conditions, message), listeners },
  };
}

/** Programmed turns False; one that translation already made False keeps its own reason. */
function notProgrammed(conditions: readonly Condition[], message: string): Condition[] {
  return conditions.map((c) =>
    c.type === 'Programmed' && c.status === 'True'
      ? { ...c, status: 'False', reason: PORT_UNAVAILABLE, message }
      : c,
  );
}

function describe(binding: ListenerBinding): string {
  return `${binding.endpoint} cannot be bound (${binding.error ?? binding.code}); tried again with backoff`;
}
