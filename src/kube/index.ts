/** src/kube: what talks to the Kubernetes API server: client, discovery, the reflector, status, leader election. */
export { KubeApiClient, KubeApiError, resourcePath } from './api-client.ts';
export { type LeaderElectionOptions, type LeaderElector, startLeaderElection } from './leader-election.ts';
export { CONTROLLER_PERMISSIONS, type PermissionRule } from './permissions.ts';
export { createStatusWriter, type StatusWriter, type StatusWriterOptions } from './status-writer.ts';
