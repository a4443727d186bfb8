export { createPool, withTransaction, ensureDatabase, postgresAnswers, type Pool, type PoolClient } from './pool.js';
export { migratePostgres, MIGRATIONS_DIR } from './migrate.js';
