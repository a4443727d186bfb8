export * from './errors.js';
export { errorHandler, notFoundHandler } from './error-handler.js';
export { methodNotAllowedHandler } from './method-not-allowed.js';
export { PAGE_PROPERTIES, pageOf, schemaError, validate, validateBody, validateJsonParam, validateQuery, type Page } from './request-validation.js';
export { startServiceRuntime, type ServiceRuntime, type ServiceRuntimeOptions } from './service-runtime.js';
export { runAsWorkers } from './workers.js';
