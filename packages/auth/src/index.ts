export * from './access-levels.js';
export * from './authorization.js';
export * from './keys.js';
export * from './scopes.js';
