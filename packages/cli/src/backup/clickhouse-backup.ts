import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { Sql, createClickHouse, ident, migrateClickHouse, onCluster, shardTableName, sql, topologyOf, type ClickHouse, type ClickHouseConfig, type TopologyConfig } from '@tributary/clickhouse';
import type { ClickHouseDump, TableDump } from './backup-manifest.js';

export type ClickHouseBackupConfig = ClickHouseConfig & TopologyConfig;

/** The schema's own record: the target's migrations write it again, so it is never copied. */
const MIGRATIONS_TABLE = 'schema_migrations';
// A table copy streams for as long as a month of events takes to read or write.
const REQUEST_TIMEOUT_MS = 6 * 3_600_000;

interface StoredTable {
  /** The name rows are read and inserted through: in a cluster, a sharded table's Distributed table. */
  table: string;
  columns: string[];
  /** The expression of the stored table's partition key, empty when it has none. */
  partitionKey: string;
}

/**
 * Every table of the database that stores rows, by the name the services use. In a cluster a
 * sharded table is read through its Distributed table (every shard, one replica each) and written
 * back through it, so a restore spreads the rows over however many shards the target has; a
 * replicated table is read on and written to one server, and replication copies it to the rest.
 */
async function storedTables(clickhouse: ClickHouse, database: string): Promise<StoredTable[]> {
  const tables = await clickhouse.query<{ name: string; engine: string; partition_key: string }>(
    sql`SELECT name, engine, partition_key FROM system.tables WHERE database = ${database} ORDER BY name`,
  );
  const distributed = new Set(tables.filter((t) => t.engine === 'Distributed').map((t) => t.name));
  const stored: StoredTable[] = [];
  for (const { name, engine, partition_key } of tables) {
    if (!engine.endsWith('MergeTree') || name === MIGRATIONS_TABLE) continue;
    const table = [...distributed].find((d) => shardTableName(d) === name) ?? name;
    const columns = await clickhouse.query<{ name: string }>(
      sql`SELECT name FROM system.columns WHERE database = ${database} AND table = ${name} AND default_kind NOT IN ('MATERIALIZED', 'ALIAS')`,
    );
    stored.push({ table, columns: columns.map((c) => c.name), partitionKey: partition_key });
  }
  return stored;
}

const columnList = (columns: readonly string[]) => Sql.trusted(columns.map((c) => ident(c).text).join(', '));

/** The migrations the database has applied, so a restore can tell a backup from a newer release. */
async function appliedMigrations(clickhouse: ClickHouse): Promise<number[]> {
  const rows = await clickhouse.query<{ version: number }>(sql`SELECT DISTINCT version FROM ${ident(MIGRATIONS_TABLE)} ORDER BY version`);
  return rows.map((r) => Number(r.version));
}

/**
 * Copies every table into gzipped Native files under `dir`, one per table and partition (a month
 * of events), each read by one statement that sees the table as it was when it started. Native
 * keeps every value exactly as stored, and ClickHouse 18.16 reads and writes it over HTTP, as
 * current releases do, on one server or through a cluster's Distributed tables alike.
 */
export async function dumpClickHouse(config: ClickHouseBackupConfig, dir: string): Promise<ClickHouseDump> {
  const clickhouse = createClickHouse(config, { requestTimeoutMs: REQUEST_TIMEOUT_MS });
  try {
    await mkdir(path.join(dir, 'clickhouse'), { recursive: true });
    const dumps: TableDump[] = [];
    for (const stored of await storedTables(clickhouse, config.clickhouseDatabase)) {
      const columns = columnList(stored.columns);
      const from = ident(stored.table);
      const parts: { where: Sql; partition?: string }[] = [];
      if (stored.partitionKey === '') {
        parts.push({ where: Sql.trusted('1') });
      } else {
        // The key is the server's own text of the table's definition.
        const key = Sql.trusted(`toString(${stored.partitionKey})`);
        const partitions = await clickhouse.query<{ p: string }>(sql`SELECT DISTINCT ${key} AS p FROM ${from} ORDER BY p`);
        for (const { p } of partitions) parts.push({ where: sql`${key} = ${p}`, partition: p });
      }
      const files: TableDump['files'] = [];
      for (const [index, part] of parts.entries()) {
        const file = path.join('clickhouse', `${stored.table}.${index}.native.gz`);
        const stream = await clickhouse.exportNative(sql`SELECT ${columns} FROM ${from} WHERE ${part.where}`);
        await pipeline(stream, createGzip(), createWriteStream(path.join(dir, file)));
        files.push({ file, ...(part.partition === undefined ? {} : { partition: part.partition }) });
      }
      dumps.push({ table: stored.table, columns: stored.columns, files });
    }
    return { migrations: await appliedMigrations(clickhouse), tables: dumps };
  } finally {
    await clickhouse.close();
  }
}

/** Tables of the database that hold a row; none when the database does not exist. */
export async function clickhouseTablesWithRows(config: ClickHouseBackupConfig): Promise<string[]> {
  const clickhouse = createClickHouse(config, { database: null });
  try {
    const found: string[] = [];
    const database = ident(config.clickhouseDatabase);
    for (const { table } of await storedTables(clickhouse, config.clickhouseDatabase)) {
      const rows = await clickhouse.query<{ one: number }>(sql`SELECT 1 AS one FROM ${database}.${ident(table)} LIMIT 1`);
      if (rows.length > 0) found.push(table);
    }
    return found;
  } finally {
    await clickhouse.close();
  }
}

/**
 * Makes the database again from the backup: dropped first when `replace` (the caller checked
 * that it may), the current migrations run, then every file inserted into the columns it was read
 * from. Columns a later migration added take their defaults.
 */
export async function restoreClickHouse(config: ClickHouseBackupConfig, dir: string, dump: ClickHouseDump, replace: boolean): Promise<void> {
  if (replace) {
    const server = createClickHouse(config, { database: null });
    try {
      await server.command(Sql.trusted(`DROP DATABASE IF EXISTS ${ident(config.clickhouseDatabase).text}${onCluster(topologyOf(config))}`));
    } finally {
      await server.close();
    }
  }
  await migrateClickHouse(config);
  const clickhouse = createClickHouse(config, { requestTimeoutMs: REQUEST_TIMEOUT_MS });
  try {
    for (const table of dump.tables) {
      for (const { file } of table.files) {
        const body = createGunzip();
        await Promise.all([pipeline(createReadStream(path.join(dir, file)), body), clickhouse.importNative(table.table, table.columns, body)]);
      }
    }
  } finally {
    await clickhouse.close();
  }
}
