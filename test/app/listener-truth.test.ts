import { describe, expect, it } from 'vitest';
import {
  listenerProblems,
  listenerReadiness,
  PORT_UNAVAILABLE,
  withListenerBindings,
} from '../../src/app/listener-truth.ts';
import { DEFAULT_CONTROLLER_NAME, type TranslateOptions } from '../../src/gateway/options.ts';
import { translate } from '../../src/gateway/translate.ts';
import type { GatewayStatus } from '../../src/ir/status.ts';
import type { ListenerBinding } from '../../src/proxy/index.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';

const OPTIONS: TranslateOptions = {
  controllerName: DEFAULT_CONTROLLER_NAME,
  identity: {},
  serviceImportKinds: [],
  gatewayAddresses: ['127.0.0.1'],
  eastWest: false,
};

const result = translate(
  new Snapshot([
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'ours' },
      spec: { controllerName: DEFAULT_CONTROLLER_NAME },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'edge', namespace: 'infra' },
      spec: {
        gatewayClassName: 'ours',
        listeners: [
          { name: 'http', port: 8080, protocol: 'HTTP' },
          { name: 'other', port: 8081, protocol: 'HTTP' },
        ],
      },
    },
  ]),
  OPTIONS,
);

const held: ListenerBinding = {
  kind: 'http',
  port: 8080,
  endpoint: '127.0.0.1:8080',
  bound: false,
  code: 'EADDRINUSE',
  error: 'listen EADDRINUSE: address already in use 127.0.0.1:8080',
  failures: 3,
};
const bound: ListenerBinding = { kind: 'http', port: 8081, endpoint: '127.0.0.1:8081', bound: true };

function edge(statuses: typeof result.statuses): GatewayStatus {
  return statuses.find((s) => s.kind === 'Gateway' && s.name === 'edge')?.status as GatewayStatus;
}

describe('listener bindings over translated statuses', () => {
  it('all bound: the translation is returned as it is', () => {
    expect(withListenerBindings(result, [{ ...held, bound: true }, bound])).toBe(result);
    expect(listenerProblems(result.table, [bound])).toEqual([]);
    expect(listenerReadiness([bound])).toEqual([]);
  });

  it('an unbound port: its listener and the Gateway are Programmed=False (PortUnavailable) naming the error', () => {
    const status = edge(withListenerBindings(result, [held, bound]).statuses);
    const programmed = (name: string) =>
      status.listeners.find((l) => l.name === name)?.conditions.find((c) => c.type === 'Programmed');
    expect(programmed('http')).toMatchObject({ status: 'False', reason: PORT_UNAVAILABLE });
    expect(programmed('http')?.message).toBe(
      'listener http is not served: 127.0.0.1:8080 cannot be bound (listen EADDRINUSE: address already in use 127.0.0.1:8080); tried again with backoff',
    );
    expect(programmed('other')).toMatchObject({ status: 'True', reason: 'Programmed' });
    expect(status.conditions.find((c) => c.type === 'Programmed')).toMatchObject({
      status: 'False',
      reason: PORT_UNAVAILABLE,
    });
    // Accepted is about the configuration, which is fine.
    expect(status.conditions.find((c) => c.type === 'Accepted')?.status).toBe('True');
    // Translation's own result is not touched.
    expect(edge(result.statuses).conditions.find((c) => c.type === 'Programmed')?.status).toBe('True');
  });

  it('a problem line and a readiness reason per unbound socket, the east-west one included', () => {
    const eastWest: ListenerBinding = {
      kind: 'east-west',
      port: 15080,
      endpoint: '127.0.0.1:15080',
      bound: false,
      code: 'EACCES',
      error: 'listen EACCES: permission denied 127.0.0.1:15080',
    };
    expect(listenerProblems(result.table, [held, bound, eastWest])).toEqual([
      'error: listener port 8080 at 127.0.0.1:8080 (infra/edge/http) cannot be bound: listen EADDRINUSE: address already in use 127.0.0.1:8080; tried again with backoff',
      'error: east-west listener 127.0.0.1:15080 cannot be bound: listen EACCES: permission denied 127.0.0.1:15080; tried again with backoff',
    ]);
    expect(listenerReadiness([held, bound, eastWest])).toEqual([
      'listener port 8080 not bound at 127.0.0.1:8080: EADDRINUSE',
      'east-west listener not bound at 127.0.0.1:15080: EACCES',
    ]);
  });
});
