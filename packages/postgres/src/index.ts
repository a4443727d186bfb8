export { createPool, withTransaction, ensureDatabase, type Pool, type PoolClient } from './pool.js';
export { migratePostgres, MIGRATIONS_DIR } from './migrate.js';
