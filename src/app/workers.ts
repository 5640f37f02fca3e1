import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { pino } from 'pino';
import { AggregatorRegistry, collectDefaultMetrics, Registry } from 'prom-client';
import type { CliOptions } from '../cli/args.ts';
import type { BackendCluster, RouteTable } from '../ir/route-table.ts';
import type { BalancerState } from '../lb/index.ts';
import { logFormatOptions } from '../log/text-format.ts';
import { TICKET_SECRET_BYTES } from '../net/tls-ticket-keys.ts';
import type { ListenerBinding } from '../proxy/index.ts';
import { type DataPlane, type ProbeResult, startDataPlane } from './data-plane.ts';
import { workersSessionSecret } from './session-setup.ts';
import type { StartTracing } from './tracing-setup.ts';
import { identityKey, type NetworkIdentityReport, worstNetworkIdentity } from './worker-network-identity.ts';

/**
 * `--workers N` (issue 5, multi-core): the primary process runs the sources, translation, status and the admin
 * server; N worker processes each run a data plane. Every routing table is broadcast to every worker over IPC,
 * and the listening sockets are shared through node:cluster with SCHED_NONE, so the kernel spreads connections
 * over the workers' accept() calls.
 *
 * Active health checks run once: one designated worker (the prober; its replacement if it exits) probes every
 * endpoint every interval and sends each result to the primary, which hands it to every other worker, so all
 * balancers count the same probe verdicts. Passive signals (ejections, avoidance, load) stay per worker: each
 * learns from its own traffic. Connection limits are per worker (documented in docs/operations.md).
 */
type ToWorker =
  | { readonly type: 'route-table'; readonly id: number; readonly table: RouteTable }
  /** Endpoint sets of some backends of the table in force (DataPlane.applyEndpoints). */
  | { readonly type: 'endpoints'; readonly id: number; readonly backends: readonly BackendCluster[] }
  | { readonly type: 'probe-result'; readonly result: ProbeResult }
  | { readonly type: 'describe-balancers'; readonly id: number };
type FromWorker =
  /** The worker listens for tables now (messages sent before that would be lost). */
  | { readonly type: 'ready' }
  | { readonly type: 'route-table-applied'; readonly id: number }
  | { readonly type: 'route-table-failed'; readonly id: number; readonly error: string }
  | { readonly type: 'probe-result'; readonly result: ProbeResult }
  | { readonly type: 'balancers'; readonly id: number; readonly balancers: Record<string, BalancerState> }
  /** The worker's listening sockets changed (bound, failed to bind, left the table). */
  | { readonly type: 'listeners'; readonly listeners: readonly ListenerBinding[] }
  /** The worker's network identity (multi-network) changed: a new certificate, a problem, a state by the clock. */
  | { readonly type: 'network-identity'; readonly identity: NetworkIdentityReport };

export interface WorkerPool extends DataPlane {
  /** Prometheus text of every worker's registry, aggregated (counters summed, gauges per worker summed). */
  metrics(): Promise<string>;
  /** The balancers of the worker that probes (probe verdicts are the same in every worker). */
  balancers(): Promise<Record<string, BalancerState>>;
}

/** Tells a worker the east-west port the primary settled on (the demo turns it on without a flag). */
const EAST_WEST_PORT_ENV = 'CLUSTERSET_GATEWAY_WORKER_EAST_WEST_PORT';
/** How often a worker checks whether its network identity report changed (files are read again every second). */
const IDENTITY_REPORT_INTERVAL_MS = 1000;
/** Set to 1 in the one worker that runs the active health checks. */
const PROBER_ENV = 'CLUSTERSET_GATEWAY_WORKER_PROBES';
/**
 * The session persistence key the primary generated for its workers when there is no --session-key-file: a
 * connection may land on any worker, so all of them must open each other's session values.
 */
const SESSION_SECRET_ENV = 'CLUSTERSET_GATEWAY_WORKER_SESSION_SECRET';
/**
 * The TLS session ticket key secret the primary generated for its workers: a client resuming its session may land
 * on another worker than the one that issued its ticket, so all of them derive the same keys (tls-ticket-keys.ts).
 */
const TICKET_SECRET_ENV = 'CLUSTERSET_GATEWAY_WORKER_TLS_TICKET_SECRET';
/** How long /config_dump waits for the prober's balancers before it shows none. */
const DESCRIBE_TIMEOUT_MS = 2_000;

export async function startWorkerPool(
  count: number,
  eastWestPort: number | undefined,
  logger: Logger,
): Promise<WorkerPool> {
  const log = logger.child({ component: 'workers' });
  const sessionSecret = workersSessionSecret().toString('base64');
  const ticketSecret = randomBytes(TICKET_SECRET_BYTES).toString('base64');
  const aggregator = new AggregatorRegistry();
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  // The same extension as this module: .ts when run from source (tsx), .js from dist/.
  const extension = import.meta.url.slice(import.meta.url.lastIndexOf('.'));
  cluster.setupPrimary({
    exec: new URL(`./worker-main${extension}`, import.meta.url).pathname,
    args: process.argv.slice(2),
  });
  let latest: ToWorker | undefined;
  let nextId = 1;
  let stopping = false;
  const pending = new Map<number, { remaining: Set<number>; done: () => void; fail: (e: Error) => void }>();

  const settle = (workerId: number, appliedId: number): void => {
    for (const [id, wait] of pending) {
      if (id > appliedId) continue;
      wait.remaining.delete(workerId);
      if (wait.remaining.size === 0) {
        pending.delete(id);
        wait.done();
      }
    }
  };

  let prober: Worker | undefined;
  let nextDescribe = 1;
  const describing = new Map<number, (balancers: Record<string, BalancerState>) => void>();
  const listenersByWorker = new Map<number, readonly ListenerBinding[]>();
  const listenerWatchers: (() => void)[] = [];
  const listenersChanged = (): void => {
    for (const watcher of listenerWatchers) watcher();
  };
  const identityByWorker = new Map<number, NetworkIdentityReport>();
  const identityWatchers: (() => void)[] = [];
  const identityChanged = (): void => {
    for (const watcher of identityWatchers) watcher();
  };

  const fork = (probes: boolean): Worker => {
    const worker = cluster.fork({
      [SESSION_SECRET_ENV]: sessionSecret,
      [TICKET_SECRET_ENV]: ticketSecret,
      ...(eastWestPort === undefined ? {} : { [EAST_WEST_PORT_ENV]: String(eastWestPort) }),
      ...(probes ? { [PROBER_ENV]: '1' } : {}),
    });
    if (probes) prober = worker;
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'ready') {
        if (latest) worker.send(latest);
      } else if (message.type === 'probe-result') {
        for (const other of workers()) {
          if (other !== worker && other.isConnected()) other.send(message);
        }
      } else if (message.type === 'listeners') {
        listenersByWorker.set(worker.id, message.listeners);
        listenersChanged();
      } else if (message.type === 'network-identity') {
        identityByWorker.set(worker.id, message.identity);
        identityChanged();
      } else if (message.type === 'balancers') {
        describing.get(message.id)?.(message.balancers);
        describing.delete(message.id);
      } else if (message.type === 'route-table-failed') {
        const wait = pending.get(message.id);
        pending.delete(message.id);
        wait?.fail(new Error(`worker ${worker.id}: ${message.error}`));
      } else {
        // A worker that applied table N has also moved past every older table.
        settle(worker.id, message.id);
      }
    });
    worker.on('exit', (code, signal) => {
      settle(worker.id, Number.POSITIVE_INFINITY);
      if (listenersByWorker.delete(worker.id)) listenersChanged();
      if (identityByWorker.delete(worker.id)) identityChanged();
      if (stopping) return;
      log.error({ worker: worker.id, code, signal }, 'worker exited; starting another');
      // The replacement of the prober probes, so health checks never stop nor run twice.
      fork(worker === prober);
    });
    return worker;
  };
  for (let i = 0; i < count; i++) fork(i === 0);
  log.info({ workers: count }, 'data plane workers started');

  const workers = (): Worker[] =>
    Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);

  const broadcast = (
    message: Extract<ToWorker, { readonly id: number; readonly table?: RouteTable }>,
  ): Promise<void> => {
    const targets = workers();
    if (targets.length === 0) return Promise.resolve();
    return new Promise<void>((done, fail) => {
      pending.set(message.id, { remaining: new Set(targets.map((w) => w.id)), done, fail });
      for (const worker of targets) worker.send(message);
    });
  };

  return {
    apply(table) {
      const message: ToWorker = { type: 'route-table', id: nextId++, table };
      latest = message;
      return broadcast(message);
    },
    applyEndpoints(backends, table) {
      const id = nextId++;
      // A worker that starts later gets the whole table, endpoints included.
      if (table !== undefined) latest = { type: 'route-table', id, table };
      return broadcast({ type: 'endpoints', id, backends });
    },
    describeBalancers: () => ({}),
    listeners: () => mergeListeners(listenersByWorker.values()),
    watchListeners: (onChange) => listenerWatchers.push(onChange),
    networkIdentity: () => worstNetworkIdentity(identityByWorker.values()),
    watchNetworkIdentity: (onChange) => identityWatchers.push(onChange),
    balancers() {
      const target = prober?.isConnected() ? prober : undefined;
      if (target === undefined) return Promise.resolve({});
      const id = nextDescribe++;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          describing.delete(id);
          resolve({});
        }, DESCRIBE_TIMEOUT_MS);
        describing.set(id, (balancers) => {
          clearTimeout(timer);
          resolve(balancers);
        });
        target.send({ type: 'describe-balancers', id } satisfies ToWorker);
      });
    },
    metrics: () => aggregator.clusterMetrics(),
    async close() {
      stopping = true;
      await Promise.all(
        workers().map(
          (worker) =>
            new Promise<void>((resolve) => {
              worker.once('exit', () => resolve());
              worker.process.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}

/** A worker: a data plane fed by the primary's routing tables; its metrics are read by the primary. */
export function runWorker(cli: CliOptions, startTracing?: StartTracing): void {
  const eastWestPort = process.env[EAST_WEST_PORT_ENV] ? Number(process.env[EAST_WEST_PORT_ENV]) : undefined;
  const logger = pino({
    level: cli.logLevel,
    base: { app: 'clusterset-gateway', worker: cluster.worker?.id },
    ...logFormatOptions(cli.logFormat),
  });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one installs prom-client's answer to the primary's metrics requests in this worker.
  new AggregatorRegistry();
  const probes = process.env[PROBER_ENV] === '1';
  const sharedSessionSecret = process.env[SESSION_SECRET_ENV];
  delete process.env[SESSION_SECRET_ENV];
  const sharedTicketSecret = process.env[TICKET_SECRET_ENV];
  delete process.env[TICKET_SECRET_ENV];
  const dataPlane = startDataPlane(cli, logger, registry, {
    ...(eastWestPort === undefined ? {} : { eastWestPort }),
    role: {
      probes,
      ...(probes
        ? {
            shared: (result: ProbeResult) =>
              process.send?.({ type: 'probe-result', result } satisfies FromWorker),
          }
        : {}),
    },
    ...(startTracing === undefined ? {} : { startTracing }),
    ...(sharedSessionSecret === undefined
      ? {}
      : { sharedSessionSecret: Buffer.from(sharedSessionSecret, 'base64') }),
    ...(sharedTicketSecret === undefined
      ? {}
      : { sharedTicketSecret: Buffer.from(sharedTicketSecret, 'base64') }),
  });

  dataPlane.watchListeners(() =>
    process.send?.({ type: 'listeners', listeners: dataPlane.listeners() } satisfies FromWorker),
  );
  let identitySent: string | undefined;
  const reportIdentity = (): void => {
    const identity = dataPlane.networkIdentity();
    if (identity === undefined) return;
    const key = identityKey(identity);
    if (key === identitySent) return;
    identitySent = key;
    process.send?.({ type: 'network-identity', identity } satisfies FromWorker);
  };
  dataPlane.watchNetworkIdentity(reportIdentity);
  // Problems (a set refused, the last good one kept) and the expiry state change without a new identity.
  setInterval(reportIdentity, IDENTITY_REPORT_INTERVAL_MS).unref();
  process.on('message', (message: ToWorker) => {
    if (message?.type === 'probe-result') {
      dataPlane.recordProbe(message.result);
      return;
    }
    if (message?.type === 'describe-balancers') {
      process.send?.({
        type: 'balancers',
        id: message.id,
        balancers: dataPlane.describeBalancers(),
      } satisfies FromWorker);
      return;
    }
    if (message?.type !== 'route-table' && message?.type !== 'endpoints') return;
    const applied =
      message.type === 'route-table'
        ? dataPlane.apply(message.table)
        : dataPlane.applyEndpoints(message.backends);
    applied.then(
      () => {
        // A table can carry a new identity (--network-tls-secret): the primary hears of it before the table settles.
        reportIdentity();
        process.send?.({ type: 'route-table-applied', id: message.id } satisfies FromWorker);
      },
      (error: unknown) =>
        process.send?.({
          type: 'route-table-failed',
          id: message.id,
          error: String(error),
        } satisfies FromWorker),
    );
  });
  process.send?.({ type: 'ready' } satisfies FromWorker);
  // The primary is gone (even killed outright): nobody will send tables or read metrics any more.
  process.once('disconnect', () => process.exit(0));
  // Ctrl-C reaches the whole foreground group: the primary drains and then stops each worker with SIGTERM.
  process.on('SIGINT', () => {});
  process.once('SIGTERM', () => {
    void dataPlane.close().then(() => process.exit(0));
  });
}

/** A socket is bound when every worker bound it: a worker that could not is named (its error is the one shown). */
function mergeListeners(perWorker: Iterable<readonly ListenerBinding[]>): ListenerBinding[] {
  const merged = new Map<string, ListenerBinding>();
  for (const listeners of perWorker) {
    for (const binding of listeners) {
      const key = `${binding.kind} ${binding.address ?? ''} ${binding.port}`;
      const seen = merged.get(key);
      if (seen === undefined || (seen.bound && !binding.bound)) merged.set(key, binding);
    }
  }
  return [...merged.values()];
}
