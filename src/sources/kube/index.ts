export { KubeApiClient, KubeApiError, resourcePath } from './api-client.ts';
export { type LoadedKubeConfig, loadKubeConfig } from './kube-config.ts';
export { createKubeSource, type KubeSource, type KubeSourceOptions } from './kube-source.ts';
export { type ControllerMetrics, controllerMetrics } from './metrics.ts';
export { CONTROLLER_PERMISSIONS, type PermissionRule } from './permissions.ts';
