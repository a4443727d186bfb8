import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Session } from 'chdb';
import { ClickHouseError, ident, loadMigrations, type ClickHouse, type CompactQueryOptions, type CompactResult, type Sql } from '@tributary/clickhouse';

/**
 * A current ClickHouse (chdb's in-process engine, 26.x) behind the `ClickHouse` interface the
 * services use, so the code that reads and writes 18.16 runs unchanged against it. The schema is
 * the project's migrations in their single-node form. It answers as the HTTP server does for the
 * services' client: 64-bit integers quoted in JSON, timestamps read best-effort, and a failed
 * statement as a `ClickHouseError` with its code.
 */
export interface ChdbClickHouse extends ClickHouse {
  /** What `SELECT version()` answers. */
  readonly version: string;
}

/** Settings the services' client sends with every request (packages/clickhouse `connect`), and the HTTP server's JSON default. */
const CLIENT_SETTINGS = ['--output_format_json_quote_64bit_integers=1', '--date_time_input_format=best_effort'];

const settingValue = (value: string | number) => (typeof value === 'number' ? String(value) : `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`);

/** A statement with its per-query settings, as the HTTP client sends them in the URL. */
function withSettings(statement: string, settings: CompactQueryOptions['settings']): string {
  const entries = Object.entries(settings ?? {});
  return entries.length === 0 ? statement : `${statement} SETTINGS ${entries.map(([name, value]) => `${ident(name)} = ${settingValue(value)}`).join(', ')}`;
}

/** A chdb failure as the services' client reports one: a `ClickHouseError` with ClickHouse's code. */
export function wrapError(error: unknown): ClickHouseError {
  const message = error instanceof Error ? error.message : String(error);
  const code = /Code: (\d+)/.exec(message)?.[1];
  return new ClickHouseError(message, code === undefined ? null : Number(code), { cause: error });
}

const jsonLines = <Row>(text: string): Row[] => text.split('\n').filter((line) => line.length > 0).map((line) => JSON.parse(line) as Row);

/** A fresh engine in a temporary directory, with database `database` migrated; `close()` removes it. */
export async function createChdbClickHouse(database = 'tributary'): Promise<ChdbClickHouse> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tributary-chdb-'));
  const session = new Session(dir, { connectionArgs: CLIENT_SETTINGS });
  const run = (statement: string, format = 'TabSeparated'): string => {
    try {
      return session.query(statement, format);
    } catch (error) {
      throw wrapError(error);
    }
  };
  ident(database);
  run(`CREATE DATABASE IF NOT EXISTS ${database}`);
  run(`USE ${database}`);
  for (const migration of await loadMigrations()) for (const statement of migration.statements) run(statement);
  const version = run('SELECT version()').trim();

  const insertText = async (table: string, columns: readonly string[], format: 'JSONEachRow' | 'TabSeparated', values: string): Promise<void> => {
    for (const name of [table, ...columns]) ident(name);
    try {
      await session.insert({ table, columns, format, values, settings: { date_time_input_format: 'best_effort' } });
    } catch (error) {
      throw wrapError(error);
    }
  };

  return {
    version,
    async query<Row>(statement: Sql): Promise<Row[]> {
      return jsonLines<Row>(run(statement.text, 'JSONEachRow'));
    },
    async queryCompact(statement: Sql, options: CompactQueryOptions = {}): Promise<CompactResult> {
      const { meta, data } = JSON.parse(run(withSettings(statement.text, options.settings), 'JSONCompact')) as CompactResult;
      return { meta: meta ?? [], data };
    },
    // Statements run one at a time, to the end, inside the caller's own call: none is left running to stop.
    async kill(): Promise<void> {},
    async *stream<Row>(statement: Sql, options: CompactQueryOptions = {}): AsyncIterable<Row[]> {
      const rows = jsonLines<Row>(run(withSettings(statement.text, options.settings), 'JSONEachRow'));
      if (rows.length > 0) yield rows;
    },
    async *streamLines(statement: Sql, options: CompactQueryOptions = {}): AsyncIterable<Buffer[]> {
      const text = run(withSettings(statement.text, options.settings), 'TabSeparatedRaw');
      const lines = text.split(/(?<=\n)/).filter((line) => line.length > 0).map((line) => Buffer.from(line));
      if (lines.length > 0) yield lines;
    },
    async command(statement: Sql, options: CompactQueryOptions = {}): Promise<void> {
      run(withSettings(statement.text, options.settings));
    },
    async insert(table, columns, rows): Promise<void> {
      if (rows.length === 0) return;
      await insertText(table, columns, 'JSONEachRow', rows.map((row) => JSON.stringify(row)).join('\n'));
    },
    async insertEncoded(table, rows): Promise<void> {
      if (rows.length === 0) return;
      const chunks: Buffer[] = [];
      for await (const chunk of rows.stream()) chunks.push(chunk as Buffer);
      await insertText(table, rows.columns, 'TabSeparated', Buffer.concat(chunks).toString());
    },
    // Backups stream Native bytes over HTTP; chdb answers text, and no test backs up on it.
    async exportNative(): Promise<never> {
      throw new Error('Native export is not available on the chdb engine');
    },
    async importNative(): Promise<never> {
      throw new Error('Native import is not available on the chdb engine');
    },
    async ping(): Promise<boolean> {
      return session.open;
    },
    async close(): Promise<void> {
      session.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
