import type { RunningPod } from './topology.ts';

/**
 * What the demo's world (src/demo/world.ts: the pods and the simulated member API servers, in a child process of
 * the gateway, as real clusters are other processes) and the gateway say to each other over the fork's IPC channel.
 */
export interface WorldStarted {
  readonly type: 'started';
  readonly pods: readonly RunningPod[];
  readonly members: readonly { readonly cluster: string; readonly url: string }[];
  readonly clusterProfiles: readonly unknown[];
  readonly providerFile: string;
  readonly kubeconfig: string;
  readonly kubeconfigFile: string;
  /** The gateway's own network certificate, key and trust bundle (made at start with the demo's trust domain). */
  readonly networkIdentity: {
    readonly certFile: string;
    readonly keyFile: string;
    readonly trustBundleFile: string;
  };
  /** The clusters on other networks and their network gateways (processes of the world). */
  readonly networkGateways: readonly {
    readonly cluster: string;
    readonly network: string;
    readonly address: string;
    readonly adminUrl: string;
    readonly pid: number;
  }[];
  /** The world's own temporary folder (credential plugin, certificate, kubeconfig): removed when it stops. */
  readonly workDir: string;
}

export interface WorldFailed {
  readonly type: 'failed';
  readonly message: string;
}

/** `/demo/stop` or `/demo/start`: the query selects pods (src/demo/pod-selection.ts). */
export interface SetPodsRunning {
  readonly type: 'set-running';
  readonly id: number;
  readonly up: boolean;
  readonly query: string;
}

export interface PodsChanged {
  readonly type: 'changed';
  readonly id: number;
  readonly status: number;
  readonly message: string;
  /** The pods started or stopped, when the selection named any. */
  readonly pods?: readonly string[];
}

/** What each member API server holds now, for `/demo/sync` to wait until the gateway serves the same. */
export interface DescribeMembers {
  readonly type: 'describe-members';
  readonly id: number;
}

export interface MemberContents {
  readonly cluster: string;
  /** `namespace/name` of every ServiceExport, sorted. */
  readonly serviceExports: readonly string[];
  readonly services: number;
  readonly endpointSlices: number;
}

export interface MembersDescribed {
  readonly type: 'members';
  readonly id: number;
  readonly members: readonly MemberContents[];
}

export type WorldMessage = WorldStarted | WorldFailed | PodsChanged | MembersDescribed;
export type GatewayMessage = SetPodsRunning | DescribeMembers;
