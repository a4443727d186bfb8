export * from './errors.js';
export { errorHandler, notFoundHandler } from './error-handler.js';
export { methodNotAllowedHandler } from './method-not-allowed.js';
export { PAGE_PROPERTIES, PAGE_SCHEMA, pageOf, schemaError, validate, validateBody, validateJsonParam, validateQuery, type Page } from './request-validation.js';
export { startServiceRuntime, type ServiceRuntime, type ServiceRuntimeOptions } from './service-runtime.js';
export { Counter, Gauge, Histogram, Registry, RUNTIME_PATHS, createMetrics, requestObservability } from './observability.js';
export { mountedRoutes, routePattern, type MountedRoute } from './route-table.js';
export { documented, openApiDocument, openApiPath, withDoc, type DocumentInfo, type OperationDoc } from './openapi.js';
export { runAsWorkers } from './workers.js';
