import type { MemberContents } from './world-protocol.ts';

/**
 * What the gateway serves, read by the demo's admin routes so that each returns only once the change it made is
 * what requests meet (issue 42: the README's lines give the same answers pasted back to back). Wired in
 * src/app/source-setup.ts from the data plane, the fleet source and the reconciler.
 */
export interface DemoServedView {
  /** Every balancer's endpoints with the health model's verdict (the probing worker's with --workers). */
  balancers(): Promise<
    Readonly<
      Record<string, { readonly endpoints: readonly { readonly key: string; readonly healthy: boolean }[] }>
    >
  >;
  /** The fleet as the gateway has it (the /config_dump section); undefined outside fleet mode. */
  fleet(): ServedFleet | undefined;
  /** Resolves once every snapshot the sources handed over is applied to the data plane. */
  settled(): Promise<void>;
}

export interface ServedFleet {
  readonly members: readonly {
    readonly name: string;
    readonly counts: { readonly services: number; readonly endpointSlices: number };
  }[];
  readonly exports: readonly {
    readonly cluster: string;
    readonly namespace: string;
    readonly name: string;
  }[];
}

const POLL_MS = 50;

/**
 * Waits until every endpoint among `keys` has the health verdict `healthy` in every balancer that has it (one
 * that none has is served by nobody: nothing to wait for). False when `timeoutMs` passes first.
 */
export async function waitForHealth(
  view: Pick<DemoServedView, 'balancers'>,
  keys: ReadonlySet<string>,
  healthy: boolean,
  timeoutMs: number,
): Promise<boolean> {
  return poll(timeoutMs, async () => {
    for (const balancer of Object.values(await view.balancers())) {
      for (const endpoint of balancer.endpoints) {
        if (keys.has(endpoint.key) && endpoint.healthy !== healthy) return false;
      }
    }
    return true;
  });
}

/**
 * Waits until the gateway's fleet view holds what the members hold (`members`, read from their API servers just
 * before), then until the snapshot made from it is applied. Members the gateway does not watch (fleet flags name
 * other members) are not waited for. Returns the members still behind when `timeoutMs` passes first.
 */
export async function waitForMembers(
  view: DemoServedView,
  members: readonly MemberContents[],
  timeoutMs: number,
): Promise<string[]> {
  let behind: string[] = [];
  const caughtUp = await poll(timeoutMs, async () => {
    const fleet = view.fleet();
    behind = fleet === undefined ? [] : members.filter((m) => !holds(fleet, m)).map((m) => m.cluster);
    return behind.length === 0;
  });
  if (!caughtUp) return behind;
  // The fleet source hands its snapshot over on the next turn of the event loop; then it is the reconciler's.
  await new Promise((resolve) => setImmediate(resolve));
  await view.settled();
  return [];
}

function holds(fleet: ServedFleet, member: MemberContents): boolean {
  const seen = fleet.members.find((m) => m.name === member.cluster);
  if (seen === undefined) return true;
  const exports = fleet.exports
    .filter((e) => e.cluster === member.cluster)
    .map((e) => `${e.namespace}/${e.name}`)
    .sort();
  return (
    seen.counts.services === member.services &&
    seen.counts.endpointSlices === member.endpointSlices &&
    exports.length === member.serviceExports.length &&
    exports.every((name, i) => name === member.serviceExports[i])
  );
}

async function poll(timeoutMs: number, done: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await done()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
