import type { ExportModel, ExportRecord } from './export-part.js';

/**
 * The columns of an S3 export file. Events carry PostHog's S3 default fields (its
 * `s3_default_fields`: no team_id, set or set_once, for backwards compatibility); persons carry
 * its persons model. Both end with `_inserted_at`, the time that placed the row in its window.
 */
export type ColumnKind = 'string' | 'json' | 'time' | 'integer' | 'boolean';
type Kind = ColumnKind;
interface Column {
  name: string;
  from: string;
  kind: Kind;
}

const column = (name: string, kind: Kind, from = name): Column => ({ name, from, kind });

const S3_COLUMNS: Record<ExportModel, Column[]> = {
  events: [
    column('uuid', 'string'),
    column('event', 'string'),
    column('properties', 'json'),
    column('distinct_id', 'string'),
    column('timestamp', 'time'),
    column('created_at', 'time'),
    column('elements_chain', 'string'),
    column('person_id', 'string'),
    column('person_properties', 'json'),
    column('_inserted_at', 'time', 'inserted_at'),
  ],
  persons: [
    column('team_id', 'integer'),
    column('distinct_id', 'string'),
    column('person_id', 'string'),
    column('properties', 'json'),
    column('person_version', 'integer'),
    column('person_distinct_id_version', 'integer'),
    column('created_at', 'time'),
    column('is_deleted', 'boolean'),
    column('_inserted_at', 'time', 'inserted_at'),
  ],
};

const isMissing = (value: unknown) => value === undefined || value === null;

/**
 * A record as one JSON line: JSON columns as objects, times as the record's ISO strings. A JSON
 * column given as a string is taken to be JSON text (as ClickHouse holds it) and written as it
 * is: parsing it only to write it again would cost more than the rest of the line.
 */
export function jsonLine(model: ExportModel, record: ExportRecord): string {
  return `${LINE_FIELDS[model].map(({ key, from, kind }) => key + lineValue(kind, record[from])).join(',')}}\n`;
}

const lineValue = (kind: Kind, value: unknown) => (isMissing(value) ? 'null' : kind === 'json' && typeof value === 'string' ? value : JSON.stringify(value));
/** Each column's `"name":` (the first with the line's `{`), written once rather than per row. */
const LINE_FIELDS = Object.fromEntries(
  Object.entries(S3_COLUMNS).map(([model, columns]) => [model, columns.map((column, i) => ({ ...column, key: `${i === 0 ? '{' : ''}${JSON.stringify(column.name)}:` }))]),
) as Record<ExportModel, (Column & { key: string })[]>;

/**
 * The fields of a model's JSON line, in order: `key` is `"name":` (the first with the line's `{`),
 * `from` the record field it is read from. For writing the same lines elsewhere: ClickHouse writes
 * the events' lines itself (the worker's window reader).
 */
export function jsonLineFields(model: ExportModel): readonly { key: string; from: string; kind: ColumnKind }[] {
  return LINE_FIELDS[model];
}

const PARQUET_TYPES = { string: 'STRING', json: 'JSON', time: 'TIMESTAMP', integer: 'INT64', boolean: 'BOOLEAN' } as const;

/** The Parquet columns of a model: JSON columns as JSON text, times as millisecond timestamps, integers as INT64. */
export function parquetColumns(model: ExportModel): { name: string; type: (typeof PARQUET_TYPES)[Kind] }[] {
  return S3_COLUMNS[model].map(({ name, kind }) => ({ name, type: PARQUET_TYPES[kind] }));
}

/** A record as one Parquet row, each value as its column's type asks. */
export function parquetRow(model: ExportModel, record: ExportRecord): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const { name, from, kind } of S3_COLUMNS[model]) {
    const value = record[from];
    if (isMissing(value)) row[name] = null;
    else if (kind === 'json') row[name] = typeof value === 'string' ? value : JSON.stringify(value);
    else if (kind === 'time') row[name] = new Date(String(value));
    else if (kind === 'integer') row[name] = BigInt(String(value));
    else if (kind === 'boolean') row[name] = Boolean(value);
    else row[name] = String(value);
  }
  return row;
}
