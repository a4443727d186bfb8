/**
 * Rows in ClickHouse's TabSeparated format, encoded as they are added. Ingest writes each row
 * once: encoding it here costs a string concatenation, where the client's JSONEachRow encodes
 * every row object again at insert time and escapes the JSON text of its properties a second
 * time. The rows of many chunks are joined only when they are sent.
 */
export type Cell = string | number;

// TabSeparated reads backslash escapes, and a raw tab or line break would end the field or row.
const SPECIAL = /[\\\t\n\r\0]/;
const SPECIALS = /[\\\t\n\r\0]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };

/** A value as a TabSeparated field. */
export function tabSeparatedField(value: Cell): string {
  if (typeof value === 'number') return String(value);
  return SPECIAL.test(value) ? value.replace(SPECIALS, (c) => ESCAPES[c]!) : value;
}

export class TabSeparatedRows<Row extends Record<keyof Row, Cell>> {
  private lines: string[] = [];

  constructor(readonly columns: readonly (keyof Row & string)[]) {}

  get length(): number {
    return this.lines.length;
  }

  add(row: Row): void {
    let line = '';
    for (let i = 0; i < this.columns.length; i++) line += (i === 0 ? '' : '\t') + tabSeparatedField(row[this.columns[i]!]);
    this.lines.push(`${line}\n`);
  }

  /** Takes the rows of `other` (same table) after these. */
  append(other: TabSeparatedRows<Row>): void {
    for (const line of other.lines) this.lines.push(line);
  }

  /** The rows as the body of an INSERT … FORMAT TabSeparated. */
  text(): string {
    return this.lines.join('');
  }
}
