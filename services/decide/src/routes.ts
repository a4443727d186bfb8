/** What decide lends other services: its routes, which the api documents in its OpenAPI document. */
export { flagRoutes, localEvaluationRoutes, type DecideDeps } from './decide-routes.js';
export { sdkConfigRoutes, type SdkConfigDeps } from './sdk-config-routes.js';
