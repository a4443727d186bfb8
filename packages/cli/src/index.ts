export { bootstrap } from './bootstrap.js';
export * from './credentials-file.js';
