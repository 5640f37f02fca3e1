import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { fleetWatchErrors } from '../metrics/fleet-metrics.ts';
import type { ClusterProfile } from '../snapshot/mcs-resources.ts';
import type { Condition } from '../snapshot/object-meta.ts';
import type { KubeconfigMember, scanKubeconfigDir } from './kubeconfig-members.ts';
import {
  DEFAULT_MEMBER_TIMING,
  type MemberAuth,
  MemberConnection,
  type MemberTiming,
} from './member-connection.ts';
import { describeOrigin, type FleetMembers, type MemberOrigin, type MemberView } from './member-view.ts';
import { type MemberCluster, membersFromProfiles } from './profile-members.ts';
import type { AccessProvider } from './provider-file.ts';

export interface FleetMembershipOptions {
  readonly logger: Logger;
  /** `--clusterprofile-provider-file`: ClusterProfiles become members only with a provider named here. */
  readonly providers?: ReadonlyMap<string, AccessProvider>;
  /** `--member-kubeconfigs`: every kubeconfig file in this folder is a member. */
  readonly kubeconfigDir?: string;
  /** How often the kubeconfig folder is read again. Default 1 s (a removed file goes within 2 s). */
  readonly pollIntervalMs?: number;
  /** Changes are published after this much quiet. Default 50 ms. */
  readonly debounceMs?: number;
  readonly timing?: Partial<MemberTiming>;
  readonly now?: () => number;
  /** Where clusterset_gateway_fleet_watch_errors_total is counted. */
  readonly registry?: Registry;
}

/** One candidate member, whichever way it was found. */
interface Candidate {
  readonly key: string;
  /** The name when the member serves no `cluster.clusterset.k8s.io` ClusterProperty. */
  readonly fallbackName: string;
  readonly origin: MemberOrigin;
  readonly cluster: MemberCluster;
  readonly auth: MemberAuth;
  readonly properties: Readonly<Record<string, string>>;
  readonly note?: string;
  readonly connectionKey: string;
}

interface Entry {
  candidate: Candidate;
  readonly connection: MemberConnection;
  /** Order of arrival: the earlier of two members claiming one name keeps it. */
  readonly seq: number;
}

/**
 * The fleet's membership: ClusterProfiles (fed by `setClusterProfiles` from the gateway's own source) and
 * kubeconfig files, each a MemberConnection; publishes a MemberView per member, coalesced, after every change.
 * Duplicated names are refused (the later member), removed profiles and files stop their member at once.
 */
export class FleetMembership implements FleetMembers {
  readonly #o: FleetMembershipOptions;
  readonly #log: Logger;
  readonly #timing: MemberTiming;
  readonly #entries = new Map<string, Entry>();
  /** The last line logged per member key (name, state, reason) and when, so only changes are logged. */
  readonly #logged = new Map<
    string,
    { readonly summary: string; readonly state: string; readonly atMs: number }
  >();
  #problems: { profiles: readonly string[]; files: readonly string[] } = { profiles: [], files: [] };
  #seq = 0;
  #onChange: ((members: readonly MemberView[]) => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #poll: NodeJS.Timeout | undefined;
  #fileCache: ReturnType<typeof scanKubeconfigDir>['cache'] = new Map();
  /**
   * Loaded with the first `--member-kubeconfigs` scan: reading kubeconfig files takes the Kubernetes client library,
   * 75 MiB of resident memory a fleet of ClusterProfiles alone (the demo) does not need.
   */
  #scanKubeconfigDir: typeof scanKubeconfigDir | undefined;
  #profiles: readonly ClusterProfile[] = [];
  #stopped = false;

  readonly #countError: ((cluster: string) => void) | undefined;

  constructor(options: FleetMembershipOptions) {
    this.#o = options;
    this.#countError = options.registry ? fleetWatchErrors(options.registry) : undefined;
    this.#log = options.logger.child({ component: 'fleet-members' });
    this.#timing = { ...DEFAULT_MEMBER_TIMING, ...options.timing };
  }

  /** Candidates that could not become members (profile without a matching provider, unreadable file). */
  get problems(): readonly string[] {
    return [...this.#problems.profiles, ...this.#problems.files];
  }

  async start(onChange: (members: readonly MemberView[]) => void): Promise<void> {
    this.#onChange = onChange;
    if (this.#o.kubeconfigDir !== undefined) {
      this.#scanKubeconfigDir = (await import('./kubeconfig-members.ts')).scanKubeconfigDir;
      this.#scanFiles();
      this.#poll = setInterval(() => this.#scanFiles(), this.#o.pollIntervalMs ?? 1000);
      this.#poll.unref();
    }
    this.#reconcileProfiles();
    this.#publishSoon();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#poll);
    clearTimeout(this.#timer);
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.all(entries.map((e) => e.connection.stop()));
  }

  /** The ClusterProfiles of the gateway's source (hub or manifests folder), after each snapshot. */
  setClusterProfiles(profiles: readonly ClusterProfile[]): void {
    this.#profiles = profiles;
    if (this.#onChange) this.#reconcileProfiles();
  }

  #reconcileProfiles(): void {
    if (this.#stopped) return;
    const providers = this.#o.providers;
    if (!providers) return;
    const { members, problems } = membersFromProfiles(this.#profiles, providers);
    this.#setProblems('profiles', problems);
    this.#reconcile(
      'ClusterProfile',
      members.map((m) => ({
        key: `profile:${m.key}`,
        fallbackName: m.profileName,
        origin: m.origin,
        cluster: m.cluster,
        auth: { kind: 'exec', exec: m.exec },
        properties: m.properties,
        ...(m.unhealthy ? { note: m.unhealthy } : {}),
        connectionKey: m.connectionKey,
      })),
    );
  }

  #scanFiles(): void {
    const dir = this.#o.kubeconfigDir;
    const scanDir = this.#scanKubeconfigDir;
    if (dir === undefined || scanDir === undefined || this.#stopped) return;
    const { scan, cache } = scanDir(dir, this.#fileCache);
    this.#fileCache = cache;
    this.#setProblems('files', scan.problems);
    this.#reconcile('Kubeconfig', scan.members.map(fileCandidate));
  }

  #setProblems(which: 'profiles' | 'files', problems: readonly string[]): void {
    const before = new Set(this.#problems[which]);
    for (const problem of problems)
      if (!before.has(problem)) this.#log.warn({ problem }, 'not a fleet member');
    this.#problems = { ...this.#problems, [which]: problems };
  }

  #reconcile(kind: MemberOrigin['kind'], candidates: readonly Candidate[]): void {
    const wanted = new Map(candidates.map((c) => [c.key, c]));
    let changed = false;
    for (const [key, entry] of this.#entries) {
      if (entry.candidate.origin.kind !== kind) continue;
      const next = wanted.get(key);
      if (next && next.connectionKey === entry.candidate.connectionKey) {
        if (JSON.stringify(next) !== JSON.stringify(entry.candidate)) changed = true;
        entry.candidate = next;
        continue;
      }
      this.#entries.delete(key);
      this.#logged.delete(key);
      void entry.connection.stop();
      changed = true;
      this.#log.info(
        { member: key, server: entry.candidate.cluster.server },
        next ? 'member changed; reconnecting' : 'member removed',
      );
    }
    for (const candidate of candidates) {
      if (this.#entries.has(candidate.key)) continue;
      const connection = new MemberConnection({
        label: candidate.key,
        cluster: candidate.cluster,
        auth: candidate.auth,
        logger: this.#log.child({ member: candidate.key }),
        onChange: () => this.#publishSoon(),
        onError: () => this.#countError?.(this.#nameOf(candidate.key)),
        timing: this.#timing,
        ...(this.#o.now ? { now: this.#o.now } : {}),
      });
      this.#entries.set(candidate.key, { candidate, connection, seq: this.#seq++ });
      connection.start();
      changed = true;
      this.#log.info({ member: candidate.key, server: candidate.cluster.server }, 'member added');
    }
    if (changed) this.#publishSoon();
  }

  #publishSoon(): void {
    if (this.#stopped || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#publish();
    }, this.#o.debounceMs ?? 50);
  }

  #publish(): void {
    if (this.#stopped || !this.#onChange) return;
    this.#onChange(this.views());
  }

  /** `--write-export-status`: the member that holds the name `cluster` (the first to claim it) writes. */
  async writeExportStatus(
    cluster: string,
    namespace: string,
    name: string,
    conditions: readonly Condition[],
  ): Promise<void> {
    const owner = [...this.#entries.values()]
      .sort((a, b) => a.seq - b.seq)
      .find((e) => (e.connection.current().clusterName ?? e.candidate.fallbackName) === cluster);
    if (!owner) throw new Error(`no member cluster ${cluster}`);
    await owner.connection.patchExportStatus(namespace, name, conditions);
  }

  /** The member's cluster name (its ClusterProperty, else the profile's or file's name). */
  #nameOf(key: string): string {
    const entry = this.#entries.get(key);
    if (!entry) return key;
    return entry.connection.current().clusterName ?? entry.candidate.fallbackName;
  }

  /** FleetMembers.viewsNow: what the next `onChange` will publish. */
  viewsNow(): readonly MemberView[] {
    return this.views();
  }

  /** Every member's current view, in order of arrival. */
  views(): readonly MemberView[] {
    const claimed = new Map<string, Entry>();
    const views: MemberView[] = [];
    for (const entry of [...this.#entries.values()].sort((a, b) => a.seq - b.seq)) {
      const { candidate, connection } = entry;
      const current = connection.current();
      const name = current.clusterName ?? candidate.fallbackName;
      const owner = claimed.get(name);
      const properties: Record<string, string> = {};
      for (const p of current.clusterProperties) {
        if (typeof p.spec?.value === 'string') properties[p.metadata.name] = p.spec.value;
      }
      Object.assign(properties, candidate.properties);
      let view: MemberView;
      if (owner) {
        view = {
          name,
          origin: candidate.origin,
          server: candidate.cluster.server,
          state: 'refused',
          reason: `cluster name "${name}" is already claimed by ${describeOrigin(owner.candidate.origin)}`,
          properties,
          serviceExports: [],
          services: [],
          endpointSlices: [],
          clusterProperties: [],
        };
      } else {
        claimed.set(name, entry);
        const reason = [candidate.note, current.reason].filter(Boolean).join('; ');
        view = {
          name,
          origin: candidate.origin,
          server: candidate.cluster.server,
          state: current.state,
          ...(reason ? { reason } : {}),
          ...(current.lastSyncTime ? { lastSyncTime: current.lastSyncTime } : {}),
          properties,
          serviceExports: current.serviceExports,
          services: current.services,
          endpointSlices: current.endpointSlices,
          clusterProperties: current.clusterProperties,
        };
      }
      this.#logTransition(candidate.key, view);
      views.push(view);
    }
    return views;
  }

  /**
   * A line when a member's name or state changes. A failing member's reason moves with each retry (which kind
   * failed, which socket error): a new reason in the same state is logged at most once per backoff step
   * (`backoffMaxMs`), so a member that keeps failing does not fill the log.
   */
  #logTransition(key: string, view: MemberView): void {
    const summary = `${view.name}|${view.state}|${view.reason ?? ''}`;
    const last = this.#logged.get(key);
    if (last?.summary === summary) return;
    const now = (this.#o.now ?? Date.now)();
    const sameState = last !== undefined && last.state === `${view.name}|${view.state}`;
    if (sameState && now - last.atMs < this.#timing.backoffMaxMs) return;
    this.#logged.set(key, { summary, state: `${view.name}|${view.state}`, atMs: now });
    const fields = {
      member: key,
      cluster: view.name,
      server: view.server,
      state: view.state,
      reason: view.reason,
    };
    if (view.state === 'stale' || view.state === 'refused' || view.state === 'error')
      this.#log.warn(fields, 'member state changed');
    else this.#log.info(fields, 'member state changed');
  }
}

function fileCandidate(member: KubeconfigMember): Candidate {
  return {
    key: `file:${member.key}`,
    fallbackName: member.fileName,
    origin: { kind: 'Kubeconfig', file: member.key },
    cluster: member.cluster,
    auth: member.auth,
    properties: {},
    connectionKey: member.connectionKey,
  };
}
