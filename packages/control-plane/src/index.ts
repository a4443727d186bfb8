export * from './control-plane-store.js';
export * from './token-resolver.js';
export * from './feature-flag-store.js';
export * from './flag-changes.js';
export * from './person-cache.js';
export * from './group-type-mappings.js';
