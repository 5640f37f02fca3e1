import { describe, expect, it } from 'vitest';
import { DEFAULT_CONTROLLER_NAME, type TranslateOptions } from '../../src/gateway/options.ts';
import { translate } from '../../src/gateway/translate.ts';
import type { GatewayStatus } from '../../src/ir/status.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';

const OPTIONS: TranslateOptions = {
  controllerName: DEFAULT_CONTROLLER_NAME,
  identity: {},
  serviceImportKinds: [],
  gatewayAddresses: ['127.0.0.1'],
  eastWest: false,
  loopbackAddressPerGateway: true,
  isLocalAddress: (address) => address.startsWith('127.'),
};

function run(addresses: readonly { type?: string; value?: string }[]) {
  const snapshot = new Snapshot([
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'ours' },
      spec: { controllerName: DEFAULT_CONTROLLER_NAME },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'infra' },
      spec: {
        gatewayClassName: 'ours',
        addresses,
        listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
      },
    },
  ]);
  const result = translate(snapshot, OPTIONS);
  const status = result.statuses.find((s) => s.kind === 'Gateway')?.status as GatewayStatus;
  const conditions = Object.fromEntries(status.conditions.map((c) => [c.type, `${c.status}/${c.reason}`]));
  return { status, conditions, ports: result.table.ports };
}

describe('Gateway spec.addresses', () => {
  it('binds a usable IPAddress and reports exactly it', () => {
    const { status, conditions, ports } = run([{ value: '127.0.0.9' }]);
    expect(status.addresses).toEqual([{ type: 'IPAddress', value: '127.0.0.9' }]);
    expect(conditions).toMatchObject({ Accepted: 'True/Accepted', Programmed: 'True/Programmed' });
    expect(ports.map((p) => `${p.address}:${p.port}`)).toEqual(['127.0.0.9:80']);
  });

  it('is not programmed when an address cannot be bound here (AddressNotUsable)', () => {
    const { conditions } = run([{ type: 'IPAddress', value: '192.0.2.1' }, { value: '127.0.0.9' }]);
    expect(conditions).toMatchObject({ Accepted: 'True/Accepted', Programmed: 'False/AddressNotUsable' });
  });

  it('refuses an address type it does not support, and a value that is no IP (UnsupportedAddress)', () => {
    expect(run([{ type: 'test/fake-invalid-type', value: 'x' }]).conditions.Accepted).toBe(
      'False/UnsupportedAddress',
    );
    expect(run([{ type: 'IPAddress', value: 'not-an-ip' }]).conditions.Accepted).toBe(
      'False/UnsupportedAddress',
    );
    expect(run([{ type: 'IPAddress', value: 'not-an-ip' }]).ports).toEqual([]);
  });

  it('assigns an address to an entry without a value', () => {
    const { status, conditions } = run([{ type: 'IPAddress' }]);
    expect(status.addresses).toEqual([{ type: 'IPAddress', value: '127.0.0.1' }]);
    expect(conditions.Programmed).toBe('True/Programmed');
  });
});
