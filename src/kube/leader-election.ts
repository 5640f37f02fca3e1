import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { controllerMetrics } from '../metrics/controller-metrics.ts';
import { isRecord } from '../snapshot/json-object.ts';
import { KubeApiClient, KubeApiError, resourcePath } from './api-client.ts';
import { sleep } from './backoff.ts';
import { endpointFromKubeConfig } from './kubeconfig-endpoint.ts';

export interface LeaderElectionOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  /** Lease name, shared by every replica. */
  readonly name: string;
  /** This replica (pod name); must differ between replicas. */
  readonly identity: string;
  /** How long a lease is valid without renewal (client-go LeaseDuration). Default 15 s. */
  readonly leaseDurationMs?: number;
  /** How often the leader renews and candidates retry (client-go RetryPeriod). Default 2 s. */
  readonly renewMs?: number;
  /** The leader gives up if it could not renew for this long (client-go RenewDeadline). Default 2/3 of the lease. */
  readonly renewDeadlineMs?: number;
  readonly logger: Logger;
  readonly onStartedLeading?: () => void;
  readonly onStoppedLeading?: () => void;
  readonly registry?: Registry;
  /** Monotonic milliseconds for lease expiry and the renew deadline; performance.now unless a test drives it. */
  readonly now?: () => number;
}

export interface LeaderElector {
  /** True only while the lease was renewed within the renew deadline: checked before every status write. */
  readonly isLeader: boolean;
  /** Stops campaigning; a leader releases the lease so another replica takes over without waiting. */
  stop(): Promise<void>;
}

interface LeaseRecord {
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
  readonly acquireTime: string | undefined;
  readonly renewTime: string | undefined;
  readonly leaseTransitions: number;
  readonly resourceVersion: string;
}

export function startLeaderElection(options: LeaderElectionOptions): LeaderElector {
  const elector = new LeaseElector(options);
  elector.start();
  return elector;
}

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits, as the API server parses it. */
function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease, following client-go's leaderelection package: the lease is
 * taken over only when its holder has not renewed for leaseDurationSeconds as observed on this replica's own
 * clock (no clock-skew assumptions); every update carries the resourceVersion, so two candidates cannot both win.
 */
class LeaseElector implements LeaderElector {
  readonly #o: LeaderElectionOptions;
  readonly #log: Logger;
  readonly #client: KubeApiClient;
  readonly #path: string;
  readonly #leaseMs: number;
  readonly #renewMs: number;
  readonly #deadlineMs: number;
  readonly #stop = new AbortController();
  readonly #setGauge: (value: number) => void;
  readonly #now: () => number;
  #leading = false;
  #lastRenew = 0;
  #observed: { readonly key: string; readonly at: number } | undefined;
  #loop: Promise<void> | undefined;

  constructor(options: LeaderElectionOptions) {
    this.#o = options;
    this.#log = options.logger.child({
      component: 'leader-election',
      lease: `${options.namespace}/${options.name}`,
      identity: options.identity,
    });
    this.#now = options.now ?? (() => performance.now());
    this.#leaseMs = options.leaseDurationMs ?? 15_000;
    this.#renewMs = options.renewMs ?? 2_000;
    this.#deadlineMs = options.renewDeadlineMs ?? Math.round((this.#leaseMs * 2) / 3);
    this.#client = new KubeApiClient(
      endpointFromKubeConfig(options.kubeConfig),
      Math.max(500, Math.min(this.#deadlineMs, 10_000)),
    );
    this.#path = resourcePath('coordination.k8s.io', 'v1', 'leases', options.namespace, options.name);
    const metrics = options.registry ? controllerMetrics(options.registry) : undefined;
    this.#setGauge = (value) => metrics?.leader.set(value);
    this.#setGauge(0);
  }

  get isLeader(): boolean {
    return this.#leading && this.#now() - this.#lastRenew < this.#deadlineMs;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
    if (this.#leading) {
      await this.#release();
      this.#stopLeading('stopped');
    }
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      // The deadline counts from before the request: the lease the server stores was renewed no later than this.
      const attemptedAt = this.#now();
      const renewed = await this.#tryAcquireOrRenew();
      if (signal.aborted) return;
      if (renewed) {
        this.#lastRenew = attemptedAt;
        if (!this.#leading) {
          this.#leading = true;
          this.#setGauge(1);
          this.#log.info('became leader');
          this.#o.onStartedLeading?.();
        }
      } else if (this.#leading && this.#now() - this.#lastRenew >= this.#deadlineMs) {
        this.#stopLeading('failed to renew the lease before the deadline');
      }
      // Candidates retry with jitter so they do not all hit the API server at the same moment.
      const wait = this.#leading ? this.#renewMs : this.#renewMs * (1 + Math.random() * 0.2);
      await sleep(wait, signal);
    }
  }

  #stopLeading(why: string): void {
    if (!this.#leading) return;
    this.#leading = false;
    this.#setGauge(0);
    this.#log.warn({ reason: why }, 'stopped leading');
    this.#o.onStoppedLeading?.();
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    let record: LeaseRecord | undefined;
    try {
      record = parseLease(await this.#client.request('GET', this.#path));
    } catch (err) {
      if (!(err instanceof KubeApiError && err.statusCode === 404)) {
        this.#log.warn({ err: errorMessage(err) }, 'reading the lease failed');
        return false;
      }
    }
    if (!record) return this.#create(now);

    const key = `${record.holderIdentity}|${record.renewTime ?? ''}|${record.resourceVersion}`;
    if (this.#observed?.key !== key) this.#observed = { key, at: this.#now() };
    const heldByOther = record.holderIdentity !== '' && record.holderIdentity !== this.#o.identity;
    if (heldByOther) {
      const expired = this.#now() - this.#observed.at > record.leaseDurationSeconds * 1000;
      if (this.#leading) {
        // Someone else holds it now: we lost it, whatever our own deadline says.
        this.#stopLeading(`lease taken by ${record.holderIdentity}`);
      }
      if (!expired) return false;
    }
    const ours = record.holderIdentity === this.#o.identity;
    const body = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.#o.name, namespace: this.#o.namespace, resourceVersion: record.resourceVersion },
      spec: {
        holderIdentity: this.#o.identity,
        leaseDurationSeconds: this.#leaseSeconds(),
        acquireTime: ours && record.acquireTime ? record.acquireTime : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: ours ? record.leaseTransitions : record.leaseTransitions + 1,
      },
    };
    try {
      await this.#client.request('PUT', this.#path, { body });
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && err.statusCode === 409) {
        this.#log.debug('lost a race for the lease');
      } else {
        this.#log.warn({ err: errorMessage(err) }, 'updating the lease failed');
      }
      return false;
    }
  }

  #leaseSeconds(): number {
    return Math.max(1, Math.round(this.#leaseMs / 1000));
  }

  async #create(now: Date): Promise<boolean> {
    const time = microTime(now);
    try {
      await this.#client.request(
        'POST',
        resourcePath('coordination.k8s.io', 'v1', 'leases', this.#o.namespace),
        {
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: this.#o.name, namespace: this.#o.namespace },
            spec: {
              holderIdentity: this.#o.identity,
              leaseDurationSeconds: this.#leaseSeconds(),
              acquireTime: time,
              renewTime: time,
              leaseTransitions: 0,
            },
          },
        },
      );
      return true;
    } catch (err) {
      if (!(err instanceof KubeApiError && err.statusCode === 409)) {
        this.#log.warn({ err: errorMessage(err) }, 'creating the lease failed');
      }
      return false;
    }
  }

  /** client-go ReleaseOnCancel: empty holder and a one-second duration, so the next candidate need not wait. */
  async #release(): Promise<void> {
    try {
      const record = parseLease(await this.#client.request('GET', this.#path));
      if (!record || record.holderIdentity !== this.#o.identity) return;
      const now = microTime(new Date());
      await this.#client.request('PUT', this.#path, {
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: {
            name: this.#o.name,
            namespace: this.#o.namespace,
            resourceVersion: record.resourceVersion,
          },
          spec: {
            holderIdentity: '',
            leaseDurationSeconds: 1,
            acquireTime: now,
            renewTime: now,
            leaseTransitions: record.leaseTransitions,
          },
        },
      });
    } catch (err) {
      this.#log.warn({ err: errorMessage(err) }, 'releasing the lease failed');
    }
  }
}

function parseLease(value: unknown): LeaseRecord | undefined {
  if (!isRecord(value)) return undefined;
  const meta = isRecord(value.metadata) ? value.metadata : {};
  const spec = isRecord(value.spec) ? value.spec : {};
  return {
    holderIdentity: typeof spec.holderIdentity === 'string' ? spec.holderIdentity : '',
    leaseDurationSeconds: typeof spec.leaseDurationSeconds === 'number' ? spec.leaseDurationSeconds : 15,
    acquireTime: typeof spec.acquireTime === 'string' ? spec.acquireTime : undefined,
    renewTime: typeof spec.renewTime === 'string' ? spec.renewTime : undefined,
    leaseTransitions: typeof spec.leaseTransitions === 'number' ? spec.leaseTransitions : 0,
    resourceVersion: typeof meta.resourceVersion === 'string' ? meta.resourceVersion : '',
  };
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
