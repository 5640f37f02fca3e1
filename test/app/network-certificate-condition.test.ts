import { afterEach, describe, expect, it, vi } from 'vitest';
import { NetworkCertificateClock } from '../../src/app/network-certificate-clock.ts';
import {
  identityFact,
  NETWORK_CERTIFICATE_CONDITION,
  type NetworkIdentityFact,
  withNetworkCertificate,
} from '../../src/app/network-certificate-condition.ts';
import { DEFAULT_CONTROLLER_NAME } from '../../src/gateway/options.ts';
import { translate } from '../../src/gateway/translate.ts';
import type { GatewayStatus } from '../../src/ir/status.ts';
import type { Gateway } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';

const HOUR = 3_600_000;
const WARNING = 168 * HOUR;
const NOT_AFTER = Date.parse('2027-01-10T00:00:00.000Z');
const FACT: NetworkIdentityFact = {
  source: 'Secret net/west-identity',
  id: 'spiffe://demo.local/cluster/west',
  notAfterMs: NOT_AFTER,
};

function gateway(name: string, generation: number): Gateway {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name, namespace: 'infra', generation },
    spec: { gatewayClassName: 'ours', listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }] },
  };
}

const result = translate(
  new Snapshot([
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'ours' },
      spec: { controllerName: DEFAULT_CONTROLLER_NAME },
    },
    gateway('edge', 3),
    gateway('other', 1),
  ]),
  {
    controllerName: DEFAULT_CONTROLLER_NAME,
    identity: {},
    serviceImportKinds: [],
    gatewayAddresses: ['127.0.0.1'],
    eastWest: false,
  },
);

function verdict(fact: NetworkIdentityFact | undefined, nowMs: number, name = 'edge') {
  const update = withNetworkCertificate(result, fact, nowMs, WARNING).statuses.find(
    (s) => s.kind === 'Gateway' && s.name === name,
  );
  return (update?.status as GatewayStatus | undefined)?.conditions.find(
    (c) => c.type === NETWORK_CERTIFICATE_CONDITION,
  );
}

describe('the network certificate as a Gateway condition', () => {
  it('without a network identity the statuses are returned as they are', () => {
    expect(withNetworkCertificate(result, undefined, NOT_AFTER, WARNING)).toBe(result);
  });

  it('True (Valid) with more than the warning window left, on every Gateway, at its generation', () => {
    const now = NOT_AFTER - WARNING - HOUR;
    expect(verdict(FACT, now)).toEqual({
      type: NETWORK_CERTIFICATE_CONDITION,
      status: 'True',
      reason: 'Valid',
      message:
        'network certificate spiffe://demo.local/cluster/west (Secret net/west-identity) is valid until 2027-01-10T00:00:00.000Z',
      observedGeneration: 3,
    });
    expect(verdict(FACT, now, 'other')).toMatchObject({ status: 'True', observedGeneration: 1 });
    // The other conditions stay as translation made them.
    const edge = withNetworkCertificate(result, FACT, now, WARNING).statuses.find((s) => s.name === 'edge');
    expect((edge?.status as GatewayStatus | undefined)?.conditions.map((c) => c.type)).toEqual([
      'Accepted',
      'Programmed',
      NETWORK_CERTIFICATE_CONDITION,
    ]);
  });

  it('False (Expiring) inside the window, naming the certificate and when it ends', () => {
    expect(verdict(FACT, NOT_AFTER - 48 * HOUR)).toMatchObject({
      status: 'False',
      reason: 'Expiring',
      message:
        'network certificate spiffe://demo.local/cluster/west (Secret net/west-identity) expires at 2027-01-10T00:00:00.000Z, within the 168h warning window',
    });
  });

  it('False (Expired) from its end on', () => {
    expect(verdict(FACT, NOT_AFTER)).toMatchObject({
      status: 'False',
      reason: 'Expired',
      message:
        'network certificate spiffe://demo.local/cluster/west (Secret net/west-identity) expired at 2027-01-10T00:00:00.000Z',
    });
  });

  it('False (NotLoaded) while no usable certificate is in force, with the reason', () => {
    const fact = identityFact({
      source: 'Secret net/west-identity',
      problems: ['network certificate not (re)loaded: Secret net/west-identity not found; none in use'],
    });
    expect(verdict(fact, NOT_AFTER)).toMatchObject({
      status: 'False',
      reason: 'NotLoaded',
      message:
        'no usable network certificate (Secret net/west-identity): network certificate not (re)loaded: Secret net/west-identity not found; none in use',
    });
  });

  it('reads the fact from what the data plane reports', () => {
    expect(
      identityFact({
        source: '/etc/net/tls.crt',
        id: 'spiffe://demo.local/cluster/west',
        notAfter: '2027-01-10T00:00:00.000Z',
        expiresInSeconds: 5,
        problems: [],
      }),
    ).toEqual({ source: '/etc/net/tls.crt', id: 'spiffe://demo.local/cluster/west', notAfterMs: NOT_AFTER });
    expect(identityFact(undefined)).toBeUndefined();
  });
});

describe('the clock that republishes when the verdict changes by time alone', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires when the window opens, then when the certificate expires, then no more', () => {
    vi.useFakeTimers();
    vi.setSystemTime(NOT_AFTER - WARNING - 10 * HOUR);
    const states: string[] = [];
    const clock = new NetworkCertificateClock(() => {
      states.push(verdict(FACT, Date.now())?.reason ?? 'none');
      clock.arm(FACT);
    }, WARNING);
    clock.arm(FACT);
    vi.advanceTimersByTime(10 * HOUR - 1);
    expect(states).toEqual([]);
    vi.advanceTimersByTime(2);
    expect(states).toEqual(['Expiring']);
    vi.advanceTimersByTime(WARNING - 2);
    expect(states).toEqual(['Expiring']);
    vi.advanceTimersByTime(2);
    expect(states).toEqual(['Expiring', 'Expired']);
    vi.advanceTimersByTime(1000 * HOUR);
    expect(states).toEqual(['Expiring', 'Expired']);
  });

  it('a new fact replaces the armed timer; no identity arms nothing', () => {
    vi.useFakeTimers();
    vi.setSystemTime(NOT_AFTER - WARNING - HOUR);
    let fired = 0;
    const clock = new NetworkCertificateClock(() => fired++, WARNING);
    clock.arm(FACT);
    clock.arm({ ...FACT, notAfterMs: NOT_AFTER + 100 * HOUR });
    vi.advanceTimersByTime(2 * HOUR);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(100 * HOUR);
    expect(fired).toBe(1);
    clock.arm(undefined);
    clock.arm({ source: 'Secret net/west-identity' });
    vi.advanceTimersByTime(10_000 * HOUR);
    expect(fired).toBe(1);
  });
});
