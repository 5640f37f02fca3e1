export { type LoadedKubeConfig, loadKubeConfig } from './kube-config.ts';
export { createKubeSource, type KubeSource, type KubeSourceOptions } from './kube-source.ts';
