import type { Logger } from 'pino';
import type { StatusKind } from '../ir/status.ts';
import type { KubeApiClient } from './api-client.ts';
import { resourcePath } from './api-client.ts';

export interface InvolvedObject {
  readonly kind: StatusKind;
  readonly namespace?: string;
  readonly name: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
}

/**
 * Warning Events (core/v1) on Gateway API objects, so `kubectl describe` shows why a route or listener is not
 * accepted. Named like client-go's recorder (`<object>.<hex time>`); cluster-scoped objects' events go to
 * `default`, as client-go does. Best effort: a failed event is logged, never retried.
 */
export class EventRecorder {
  readonly #client: KubeApiClient;
  readonly #component: string;
  readonly #instance: string;
  readonly #log: Logger;

  constructor(client: KubeApiClient, controllerName: string, instance: string, logger: Logger) {
    this.#client = client;
    this.#component = controllerName;
    this.#instance = instance;
    this.#log = logger;
  }

  async warn(object: InvolvedObject, reason: string, message: string): Promise<void> {
    const namespace = object.namespace ?? 'default';
    const now = new Date();
    const timestamp = now.toISOString().replace(/\.\d+Z$/, 'Z');
    const name = `${object.name}.${(BigInt(now.getTime()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1e6))).toString(16)}`;
    try {
      await this.#client.request('POST', resourcePath('', 'v1', 'events', namespace), {
        body: {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name, namespace },
          involvedObject: {
            apiVersion: 'gateway.networking.k8s.io/v1',
            kind: object.kind,
            name: object.name,
            ...(object.namespace ? { namespace: object.namespace } : {}),
            ...(object.uid ? { uid: object.uid } : {}),
            ...(object.resourceVersion ? { resourceVersion: object.resourceVersion } : {}),
          },
          reason,
          message: message.slice(0, 1024),
          type: 'Warning',
          source: { component: 'clusterset-gateway' },
          firstTimestamp: timestamp,
          lastTimestamp: timestamp,
          count: 1,
          reportingComponent: this.#component,
          reportingInstance: this.#instance,
        },
      });
    } catch (err) {
      this.#log.debug(
        { err: err instanceof Error ? err.message : String(err), object: object.name },
        'event not recorded',
      );
    }
  }
}
