export { KubeApiClient, KubeApiError, resourcePath } from './api-client.ts';
export { createKubeSource, type KubeSource, type KubeSourceOptions } from './kube-source.ts';
export { type ControllerMetrics, controllerMetrics } from './metrics.ts';
