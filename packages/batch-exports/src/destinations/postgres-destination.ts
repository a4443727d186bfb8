import pg from 'pg';
import { DestinationRefused } from '../destination-address/destination-refused.js';
import type { DestinationGuard } from '../destination-address/destination-guard.js';
import { EVENT_FILTER_SCHEMA_PROPERTIES, eventFilter, type EventFilterConfig } from './event-filter.js';
import { ExportError, NonRetryableExportError, describeCause } from './export-error.js';
import type { Destination, ExportModel, ExportPart, ExportRecord, WriteResult } from './export-part.js';

/** PostHog's Postgres batch export config (`PostgresBatchExportInputs`), field for field. */
export interface PostgresDestinationConfig extends EventFilterConfig {
  user: string;
  password: string;
  host: string;
  port: number;
  database: string;
  schema: string;
  table_name: string;
  /** Encrypt, but accept a certificate no authority signed. */
  has_self_signed_cert: boolean;
}

export const POSTGRES_CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['user', 'password', 'host', 'database'],
  properties: {
    user: { type: 'string', minLength: 1 },
    password: { type: 'string' },
    host: { type: 'string', minLength: 1 },
    port: { type: 'integer', minimum: 1, maximum: 65535, default: 5432 },
    database: { type: 'string', minLength: 1 },
    schema: { type: 'string', minLength: 1, default: 'public' },
    table_name: { type: 'string', minLength: 1, maxLength: 63, default: 'events' },
    has_self_signed_cert: { type: 'boolean', default: false },
    ...EVENT_FILTER_SCHEMA_PROPERTIES,
  },
} as const;

interface Column {
  name: string;
  type: string;
  value: (record: ExportRecord) => unknown;
}
interface Table {
  columns: Column[];
  /** Rows with the same key are one row: a rewrite updates it. */
  key: string[];
  /** Only rows newer by these columns replace the stored one; none means the latest write wins. */
  newerBy: string[];
}

const field = (name: string) => (record: ExportRecord) => record[name];
const property = (name: string) => (record: ExportRecord) => (record.properties as Record<string, unknown> | null)?.[name];
const isMissing = (value: unknown) => value === undefined || value === null;
const asObject = (value: unknown) => (typeof value === 'string' ? (JSON.parse(value) as unknown) : value);

/**
 * PostHog's tables, so queries written against its exports keep working. Events have its column
 * set (`elements` is a JSON string holding the elements chain JSON-encoded once more, as PostHog's
 * `toJSONString(toJSONString(elements_chain))` stores it; `set`/`set_once`/`ip` come from the
 * properties, `site_url` is always null) plus a primary key on uuid, which PostHog's table lacks and
 * a merge needs. Persons are one row per distinct id, replaced only by a newer person or mapping
 * version, as PostHog merges them.
 */
const POSTGRES_TABLES: Record<ExportModel, Table> = {
  events: {
    columns: [
      { name: 'uuid', type: 'VARCHAR(200)', value: field('uuid') },
      { name: 'event', type: 'VARCHAR(200)', value: field('event') },
      { name: 'properties', type: 'JSONB', value: field('properties') },
      { name: 'elements', type: 'JSONB', value: (record) => (isMissing(record.elements_chain) ? null : JSON.stringify(String(record.elements_chain))) },
      { name: 'set', type: 'JSONB', value: property('$set') },
      { name: 'set_once', type: 'JSONB', value: property('$set_once') },
      { name: 'distinct_id', type: 'VARCHAR(200)', value: field('distinct_id') },
      { name: 'team_id', type: 'INTEGER', value: field('team_id') },
      { name: 'ip', type: 'VARCHAR(200)', value: property('$ip') },
      { name: 'site_url', type: 'VARCHAR(200)', value: () => null },
      { name: 'timestamp', type: 'TIMESTAMP WITH TIME ZONE', value: field('timestamp') },
    ],
    key: ['uuid'],
    newerBy: [],
  },
  persons: {
    columns: [
      { name: 'team_id', type: 'INTEGER', value: field('team_id') },
      { name: 'distinct_id', type: 'VARCHAR(200)', value: field('distinct_id') },
      { name: 'person_id', type: 'VARCHAR(200)', value: field('person_id') },
      { name: 'properties', type: 'JSONB', value: field('properties') },
      { name: 'person_distinct_id_version', type: 'BIGINT', value: field('person_distinct_id_version') },
      { name: 'person_version', type: 'BIGINT', value: field('person_version') },
      { name: 'created_at', type: 'TIMESTAMP WITH TIME ZONE', value: field('created_at') },
      { name: 'is_deleted', type: 'BOOLEAN', value: (record) => (record.is_deleted === undefined ? null : Boolean(record.is_deleted)) },
    ],
    key: ['team_id', 'distinct_id'],
    newerBy: ['person_version', 'person_distinct_id_version'],
  },
};

/**
 * JSON that Postgres's jsonb accepts: it rejects the NUL character and lone UTF-16 surrogates,
 * both of which JSON.stringify writes as escapes. They are dropped, as PostHog drops them.
 */
export function postgresSafeJson(json: string): string {
  return json
    .replace(/(?<!\\)\\u0000/g, '')
    .replace(/\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})/g, '')
    .replace(/(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}/g, '');
}

// SQLSTATE classes and codes that another attempt cannot fix: bad data (22), constraints (23),
// authentication (28), a missing database (3D) or schema (3F), the table's definition or
// privileges (42), unsupported features (0A), a read-only server, a full disk, limits.
const FINAL_CLASSES = new Set(['22', '23', '28', '3D', '3F', '42', '0A']);
const FINAL_CODES = new Set(['25006', '53100', '54000']);
/** What a CREATE TABLE IF NOT EXISTS fails with when another session creates the table at the same moment: unique_violation, duplicate_table, duplicate_object. */
const CREATED_MEANWHILE = new Set(['23505', '42P07', '42710']);

/**
 * Upserts each part in one statement, so a part is stored whole or not at all, and a rewrite
 * updates the rows it wrote before instead of adding copies. The table is created on the first
 * write when missing; an existing table is written in the columns it has of PostHog's set.
 */
export class PostgresDestination implements Destination {
  private readonly name: string;
  private client: Promise<pg.Client> | null = null;
  private readonly tables = new Map<ExportModel, Promise<Column[]>>();
  // Its one connection runs one statement at a time, and a part waiting for it holds tens of
  // megabytes of JSON: more parts at once would only add memory.
  readonly maxPartsInFlight = 1;

  constructor(
    private readonly config: PostgresDestinationConfig,
    private readonly guard: DestinationGuard,
  ) {
    this.name = `Postgres table "${config.schema}"."${config.table_name}" in database "${config.database}" at ${config.host}:${config.port}`;
  }

  async write(part: ExportPart): Promise<WriteResult> {
    const table = POSTGRES_TABLES[part.model];
    const records = part.records.filter(eventFilter(part.model, this.config));
    if (records.length === 0) return { records: 0, bytes: 0 };
    try {
      const client = await this.connect();
      const columns = await this.columns(client, part.model);
      // One statement may not touch a row twice, and ClickHouse may hold a row twice until it merges.
      const rows = new Map<string, Record<string, unknown>>();
      for (const given of records) {
        // Parsed once, as JSON text from ClickHouse, before the columns read it.
        const record = { ...given, properties: asObject(given.properties) };
        const row = Object.fromEntries(columns.map((column) => [column.name, column.value(record) ?? null]));
        rows.set(JSON.stringify(table.key.map((name) => row[name])), row);
      }
      const json = postgresSafeJson(JSON.stringify([...rows.values()]));
      await client.query(this.upsert(table, columns), [json]);
      return { records: records.length, bytes: Buffer.byteLength(json) };
    } catch (error) {
      throw this.failure(error);
    }
  }

  private upsert(table: Table, columns: Column[]): string {
    const id = (name: string) => pg.escapeIdentifier(name);
    const names = columns.map((column) => id(column.name)).join(', ');
    // Read as text, so the insert itself checks lengths against the table's own types.
    const types = columns.map((column) => `${id(column.name)} ${column.type.startsWith('VARCHAR') ? 'TEXT' : column.type}`).join(', ');
    const updated = columns.filter((column) => !table.key.includes(column.name));
    const set = updated.map((column) => `${id(column.name)} = EXCLUDED.${id(column.name)}`).join(', ');
    const newer = table.newerBy.map((name) => `EXCLUDED.${id(name)} > stored.${id(name)}`).join(' OR ');
    // A table of key columns alone has nothing to update, and an empty SET is a syntax error.
    const onConflict = set ? `DO UPDATE SET ${set}${newer ? ` WHERE ${newer}` : ''}` : 'DO NOTHING';
    return [
      `INSERT INTO ${this.qualifiedTable()} AS stored (${names})`,
      `SELECT ${names} FROM jsonb_to_recordset($1::jsonb) AS incoming(${types})`,
      `ON CONFLICT (${table.key.map(id).join(', ')}) ${onConflict}`,
    ].join(' ');
  }

  private qualifiedTable(): string {
    return `${pg.escapeIdentifier(this.config.schema)}.${pg.escapeIdentifier(this.config.table_name)}`;
  }

  /** Creates the table once per destination, then keeps the columns of PostHog's set it has. */
  private columns(client: pg.Client, model: ExportModel): Promise<Column[]> {
    let columns = this.tables.get(model);
    if (!columns) {
      columns = this.prepareTable(client, model);
      columns.catch(() => this.tables.delete(model));
      this.tables.set(model, columns);
    }
    return columns;
  }

  private async prepareTable(client: pg.Client, model: ExportModel): Promise<Column[]> {
    const table = POSTGRES_TABLES[model];
    const definitions = table.columns.map((column) => `${pg.escapeIdentifier(column.name)} ${column.type}`);
    const create = `CREATE TABLE IF NOT EXISTS ${this.qualifiedTable()} (${definitions.join(', ')}, PRIMARY KEY (${table.key.map(pg.escapeIdentifier).join(', ')}))`;
    // Postgres's IF NOT EXISTS is no lock: a writer that created the table between its check and
    // its create (workers on runs of one export) makes it fail with a duplicate key, relation or
    // row type. Asked again, the table is there; a duplicate that is not that writer's (a type of
    // the table's name) fails again, and is the error.
    await client.query(create).catch((error: { code?: string }) => {
      if (!CREATED_MEANWHILE.has(error.code ?? '')) throw error;
      return client.query(create);
    });
    const { rows } = await client.query<{ column_name: string }>('SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2', [
      this.config.schema,
      this.config.table_name,
    ]);
    const present = new Set(rows.map((row) => row.column_name));
    const missingKey = table.key.filter((name) => !present.has(name));
    if (missingKey.length > 0) throw new NonRetryableExportError(this.name, `the table has no ${missingKey.join(', ')} column, which rows are merged by`);
    return table.columns.filter((column) => present.has(column.name));
  }

  /**
   * Like libpq's default (`sslmode=prefer`): encrypted where the server offers it, checking the
   * certificate unless `has_self_signed_cert`; in the clear where the server has no TLS at all.
   * It connects to the address the guard checked, not to the name, so a name that answers
   * otherwise a moment later (DNS rebinding) cannot move it; TLS still verifies the name.
   */
  private connect(): Promise<pg.Client> {
    if (!this.client) {
      const { user, password, host, port, database, has_self_signed_cert: selfSigned } = this.config;
      const open = async (address: string, ssl: pg.ClientConfig['ssl']) => {
        const client = new pg.Client({ user, password, host: address, port, database, ssl, connectionTimeoutMillis: 30_000 });
        // An idle connection that breaks is replaced on the next write rather than crashing the worker.
        client.on('error', () => this.reset());
        await client.connect();
        return client;
      };
      this.client = this.guard.check(host, port, database).then(({ name, addresses: [address] }) =>
        open(address!, { rejectUnauthorized: !selfSigned, ...(name === null ? {} : { servername: name }) }).catch((error: Error) => {
          if (/does not support SSL/i.test(error.message)) return open(address!, false);
          throw error;
        }),
      );
      this.client.catch(() => this.reset());
    }
    return this.client;
  }

  private failure(error: unknown): ExportError {
    if (error instanceof ExportError) return error;
    if (error instanceof DestinationRefused) return new NonRetryableExportError(this.name, `refused: ${error.message}`, { cause: error });
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
      let cause = `${(error as Error).message} (SQLSTATE ${code})`;
      if (code === '42P10') {
        const keys = Object.entries(POSTGRES_TABLES).map(([model, table]) => `${table.key.join(', ')} for ${model}`);
        cause += `; rows are merged by their key (${keys.join('; ')}), so the table needs a primary key on it`;
      }
      if (FINAL_CLASSES.has(code.slice(0, 2)) || FINAL_CODES.has(code)) return new NonRetryableExportError(this.name, cause, { cause: error });
      // The connection may be what failed: the next attempt opens a new one.
      void this.reset();
      return new ExportError(this.name, cause, { cause: error });
    }
    void this.reset();
    return new ExportError(this.name, describeCause(error), { cause: error });
  }

  private async reset(): Promise<void> {
    const client = this.client;
    this.client = null;
    await client?.then((c) => c.end()).catch(() => undefined);
  }

  close(): Promise<void> {
    return this.reset();
  }
}
