export type { JsonObject } from './json.ts';
export { ALL_CRDS } from './resources.ts';
export { KubeApiServer, startKubeApiServer } from './server.ts';
export type { KubeApiServerOptions, RequestRecord } from './server-options.ts';
