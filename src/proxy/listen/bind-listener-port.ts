import type { Logger } from 'pino';
import type { ListenerSocketKind } from '../../metrics/listener-metrics.ts';
import type { ListenerBindings } from './listener-bindings.ts';

/** What a layer-4 or TLS port server offers for binding. */
export interface BindablePortServer {
  listen(host: string, port: number): Promise<number>;
}

/** One routing-table port to bind: its kind, the Gateway port as written and the Gateways' bind address. */
export interface PortToBind {
  readonly kind: ListenerSocketKind;
  readonly port: number;
  readonly address: string | undefined;
  /** How the "listener port opened" log names the protocol. */
  readonly protocol: string;
}

export interface BindContext {
  readonly host: string;
  readonly bindPort: (gatewayPort: number) => number;
  readonly logger: Logger;
  readonly bindings: ListenerBindings;
  /** Runs a retry between routing tables (the proxy's apply queue). */
  readonly serialize: (task: () => Promise<void>) => void;
}

/**
 * Binds one port server (the bind offset applied) and records the outcome under `bindingKey`. A port that
 * could not be bound is retried, between routing tables, with `reopen`. Resolves whether it was bound.
 */
export async function bindListenerPort(
  server: BindablePortServer,
  port: PortToBind,
  bindingKey: string,
  context: BindContext,
  reopen: () => Promise<void>,
): Promise<boolean> {
  const { logger, bindings } = context;
  const address = port.address ?? context.host;
  const wanted = context.bindPort(port.port);
  const socket = {
    kind: port.kind,
    port: port.port,
    ...(port.address !== undefined ? { address: port.address } : {}),
    endpoint: `${address}:${wanted}`,
  };
  try {
    const bound = await server.listen(address, wanted);
    bindings.bound(bindingKey, { ...socket, endpoint: `${address}:${bound}` });
    logger.info(
      { address, port: port.port, boundPort: bound, protocol: port.protocol },
      'listener port opened',
    );
    return true;
  } catch (err) {
    bindings.failed(bindingKey, socket, err, () => context.serialize(reopen));
    return false;
  }
}
