export * from './sql.js';
export { createClickHouse, queryInputProblem, isRefusedRows, ClickHouseError, MAX_STATEMENT_NESTING, type ClickHouse, type ClickHouseConfig, type CompactResult, type CompactQueryOptions } from './client.js';
export { migrateClickHouse, loadMigrations, splitStatements, MIGRATIONS_DIR } from './migrations.js';
export * from './person-rows.js';
export { propertyText, propertyNumber, propertyIsSet } from './json-property.js';
export { jsonObjectText, jsonStringLiteral } from './json-text.js';
export { EncodedJsonFields, RowHeads, TabSeparatedRows, tabSeparatedField, tabSeparatedJson, type Cell, type EncodedField } from './tab-separated.js';
export { dataTableName, onCluster, renderStatement, shardTableName, topologyOf, type Topology, type TopologyConfig } from './topology.js';
export { clickhouseUsersConfig, serverCaps, SERVICE_USERS, type ServerCaps, type ServiceUser, type UsersConfigOptions } from './users-config.js';
