export * from './keys.js';
export * from './scopes.js';
