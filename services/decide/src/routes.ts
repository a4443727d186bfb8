/** What decide lends other services: its routes, which the api documents in its OpenAPI document. */
export { flagRoutes } from './decide-routes.js';
export type { DecideService } from './decide-service.js';
export type { ProductLists } from './product-lists.js';
export { localEvaluationRoutes, type LocalEvaluationDeps } from './local-evaluation-routes.js';
export { sdkConfigRoutes, type SdkConfigDeps } from './sdk-config-routes.js';
