export type { JsonObject } from './json.ts';
export { ALL_CRDS } from './resources.ts';
export {
  KubeApiServer,
  type KubeApiServerOptions,
  type RequestRecord,
  startKubeApiServer,
} from './server.ts';
