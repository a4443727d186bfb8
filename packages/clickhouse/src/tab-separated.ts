import { Readable } from 'node:stream';

/**
 * Rows in ClickHouse's TabSeparated format, encoded as they are added. Ingest writes each row
 * once: encoding it here costs a string concatenation, where the client's JSONEachRow encodes
 * every row object again at insert time and escapes the JSON text of its properties a second
 * time. The encoded bytes are kept outside the JavaScript heap until they are sent, so rows
 * waiting for their insert are neither copied by the garbage collector nor count against the
 * heap limit.
 */
export type Cell = string | number;

// TabSeparated reads backslash escapes, and a raw tab or line break would end the field or row.
const SPECIALS = /[\\\t\n\r\0]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };

/** A value as a TabSeparated field. */
export function tabSeparatedField(value: Cell): string {
  if (typeof value === 'number') return String(value);
  // Five indexOf scans cost a seventh of one regular expression scan over a field of JSON text.
  const special =
    value.indexOf('\\') !== -1 || value.indexOf('\t') !== -1 || value.indexOf('\n') !== -1 || value.indexOf('\r') !== -1 || value.indexOf('\0') !== -1;
  return special ? value.replace(SPECIALS, (c) => ESCAPES[c]!) : value;
}

// Blocks start small, as most tables of a chunk get a few rows or none, and grow for those that get many.
const FIRST_BLOCK = 4 * 1024;
const TAB = 0x09;
const NEWLINE = 0x0a;
const LARGEST_BLOCK = 1024 * 1024;

export class TabSeparatedRows<Row extends Record<keyof Row, Cell>> {
  /** Full blocks, each cut to the bytes written. */
  private blocks: Buffer[] = [];
  private block: Buffer | null = null;
  private used = 0;
  private nextBlock = FIRST_BLOCK;
  private rows = 0;

  /** The row being added, field by field; kept to spare an array per row. */
  private readonly fields: string[];

  constructor(readonly columns: readonly (keyof Row & string)[]) {
    this.fields = new Array<string>(columns.length);
  }

  get length(): number {
    return this.rows;
  }

  add(row: Row): void {
    // Each field is written straight into the block: joined into a line first, an event row's
    // kilobytes of text were copied once more on the heap, the largest allocation of ingest.
    const fields = this.fields;
    let room = fields.length;
    for (let i = 0; i < fields.length; i++) {
      fields[i] = tabSeparatedField(row[this.columns[i]!]);
      // A UTF-16 code unit takes at most three bytes in UTF-8, so this much room always suffices.
      room += fields[i]!.length * 3;
    }
    if (!this.block || this.block.length - this.used < room) this.newBlock(room);
    const block = this.block!;
    for (let i = 0; i < fields.length; i++) {
      if (i > 0) block[this.used++] = TAB;
      if (fields[i]!.length > 0) this.used += block.write(fields[i]!, this.used);
    }
    block[this.used++] = NEWLINE;
    this.rows += 1;
  }

  /** Takes the rows of `other` (same table) after these. */
  append(other: TabSeparatedRows<Row>): void {
    this.seal();
    this.blocks.push(...other.bytes());
    this.rows += other.rows;
  }

  /** The rows as the body of an INSERT … FORMAT TabSeparated. */
  stream(): Readable {
    return Readable.from(this.bytes(), { objectMode: false });
  }

  private bytes(): Buffer[] {
    this.seal();
    return this.blocks;
  }

  private newBlock(atLeast: number): void {
    this.seal();
    this.block = Buffer.allocUnsafe(Math.max(atLeast, this.nextBlock));
    this.nextBlock = Math.min(LARGEST_BLOCK, this.nextBlock * 2);
  }

  private seal(): void {
    if (this.block && this.used > 0) this.blocks.push(this.block.subarray(0, this.used));
    this.block = null;
    this.used = 0;
  }
}
