export * from './errors.js';
export { errorHandler, notFoundHandler } from './error-handler.js';
export { startServiceRuntime, type ServiceRuntime, type ServiceRuntimeOptions } from './service-runtime.js';
