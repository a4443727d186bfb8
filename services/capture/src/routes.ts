/** What capture lends other services: its routes, which the api documents in its OpenAPI document. */
export { captureRoutes, type CaptureDeps } from './capture-routes.js';
