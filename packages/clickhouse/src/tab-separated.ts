import { Readable } from 'node:stream';

/**
 * Rows in ClickHouse's TabSeparated format, encoded as they are added. Ingest writes each row
 * once: encoding it here costs a string concatenation, where the client's JSONEachRow encodes
 * every row object again at insert time and escapes the JSON text of its properties a second
 * time. The encoded bytes are kept outside the JavaScript heap until they are sent, so rows
 * waiting for their insert are neither copied by the garbage collector nor count against the
 * heap limit.
 */
export type Cell = string | number | EncodedField;

declare const encodedHere: unique symbol;

/**
 * A field's bytes already encoded, `bytes[start..end]` (see EncodedJsonFields). Only this module
 * makes them, so a field's bytes are always escaped as their column needs.
 */
export interface EncodedField {
  readonly bytes: Buffer;
  readonly start: number;
  readonly end: number;
  readonly [encodedHere]: true;
}

// TabSeparated reads backslash escapes, and a raw tab or line break would end the field or row.
const SPECIALS = /[\\\t\n\r\0]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };
const BACKSLASHES = /\\/g;

/** A value as a TabSeparated field. */
export function tabSeparatedField(value: string | number): string {
  if (typeof value === 'number') return String(value);
  // Five indexOf scans cost a seventh of one regular expression scan over a field of JSON text.
  const special =
    value.indexOf('\\') !== -1 || value.indexOf('\t') !== -1 || value.indexOf('\n') !== -1 || value.indexOf('\r') !== -1 || value.indexOf('\0') !== -1;
  return special ? value.replace(SPECIALS, (c) => ESCAPES[c]!) : value;
}

/**
 * JSON text as a TabSeparated field. JSON escapes every control character itself, so only its
 * backslashes need escaping: one scan, where the longest fields ingest writes took five.
 */
export function tabSeparatedJson(text: string): string {
  return text.indexOf('\\') === -1 ? text : text.replace(BACKSLASHES, '\\\\');
}

// Blocks start small, as most tables of a chunk get a few rows or none, and grow for those that get many.
const FIRST_BLOCK = 4 * 1024;
const TAB = 0x09;
const NEWLINE = 0x0a;
const LARGEST_BLOCK = 1024 * 1024;

/**
 * Frees memory outside the heap now rather than at V8's next full collection. Encoded rows live
 * through a chunk's Postgres round trips and wait for their insert, so the objects that own their
 * memory are old by the time they are done with, and V8 frees it only once it next collects the
 * whole heap: ingest's peak RSS carried tens of megabytes of rows already written. Transferred to
 * a clone that nothing keeps, the memory goes with the clone at the next young collection. The
 * memory's views read as empty from then on.
 */
function free(memory: ArrayBuffer): void {
  structuredClone(memory, { transfer: [memory] });
}

interface BlocksMark {
  block: Buffer | null;
  used: number;
  full: number;
  allocated: number;
}

/** Bytes written one after the other into blocks outside the heap. */
class ByteBlocks {
  /** Full blocks, each cut to the bytes written. */
  private readonly full: Buffer[] = [];
  /** The memory of the blocks this allocated itself (appended ones belong to other blocks). */
  private readonly allocated: ArrayBuffer[] = [];
  private block: Buffer | null = null;
  used = 0;
  /** Where in its block the last `room` asked for begins. */
  start = 0;
  private nextBlock = FIRST_BLOCK;
  private freed = false;

  /** The block to write the next `bytes` at, from `used` on. */
  room(bytes: number): Buffer {
    this.assertNotReleased();
    if (!this.block || this.block.length - this.used < bytes) {
      this.seal();
      // Never from Node's shared pool: a block's memory is its own, to free (see `release`).
      this.block = Buffer.allocUnsafeSlow(Math.max(bytes, this.nextBlock));
      this.allocated.push(this.block.buffer as ArrayBuffer);
      this.nextBlock = Math.min(LARGEST_BLOCK, this.nextBlock * 2);
    }
    this.start = this.used;
    return this.block;
  }

  append(blocks: readonly Buffer[]): void {
    this.assertNotReleased();
    this.seal();
    this.full.push(...blocks);
  }

  blocks(): Buffer[] {
    this.assertNotReleased();
    this.seal();
    return this.full;
  }

  /** Frees the memory of the blocks this allocated; nothing may read them afterwards. */
  release(): void {
    this.freed = true;
    for (const memory of this.allocated) free(memory);
    this.allocated.length = 0;
    this.full.length = 0;
    this.block = null;
    this.used = 0;
  }

  /** Where the next bytes would go; `rewind` takes back everything written after it. */
  mark(): BlocksMark {
    return { block: this.block, used: this.used, full: this.full.length, allocated: this.allocated.length };
  }

  rewind(mark: BlocksMark): void {
    this.assertNotReleased();
    for (const memory of this.allocated.splice(mark.allocated)) free(memory);
    this.full.length = mark.full;
    this.block = mark.block;
    this.used = mark.used;
  }

  private assertNotReleased(): void {
    // Freed blocks read as empty: streamed again, released rows would be an insert of nothing.
    if (this.freed) throw new Error('rows used after they were released');
  }

  get released(): boolean {
    return this.freed;
  }

  private seal(): void {
    if (this.block && this.used > 0) this.full.push(this.block.subarray(0, this.used));
    this.block = null;
    this.used = 0;
  }
}

/**
 * Writes `head`'s bytes, if any, then the fields of `columns[from..]` of a row, tab-separated,
 * with a tab before the first when `from` is not 0, leaving `extra` bytes of room after them,
 * all in one block. `fields` is scratch space.
 */
function writeFields(
  out: ByteBlocks,
  row: Record<string, Cell>,
  columns: readonly string[],
  json: readonly boolean[],
  from: number,
  fields: (string | EncodedField)[],
  extra: number,
  head?: EncodedField,
): Buffer {
  let room = columns.length - from + extra + (head ? head.end - head.start : 0);
  for (let i = from; i < columns.length; i++) {
    const value = row[columns[i]!]!;
    if (typeof value === 'object') {
      fields[i] = value;
      room += value.end - value.start;
      continue;
    }
    const field = json[i] ? tabSeparatedJson(value as string) : tabSeparatedField(value);
    fields[i] = field;
    // A UTF-16 code unit takes at most three bytes in UTF-8, so this much room always suffices.
    room += field.length * 3;
  }
  const block = out.room(room);
  if (head) out.used += head.bytes.copy(block, out.used, head.start, head.end);
  for (let i = from; i < columns.length; i++) {
    if (i > 0) block[out.used++] = TAB;
    const field = fields[i]!;
    if (typeof field === 'object') out.used += field.bytes.copy(block, out.used, field.start, field.end);
    // Each field is written straight into the block: joined into a line first, an event row's
    // kilobytes of text were copied once more on the heap, the largest allocation of ingest.
    else if (field.length > 0) out.used += block.write(field, out.used);
  }
  return block;
}

/** Where encoded bytes are, by the number they were given, in arrays rather than an object each. */
class Spans {
  private readonly blocks: Buffer[] = [];
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  add(block: Buffer, start: number, end: number): number {
    this.blocks.push(block);
    this.starts.push(start);
    this.ends.push(end);
    return this.blocks.length - 1;
  }

  of(handle: number): EncodedField {
    return { bytes: this.blocks[handle]!, start: this.starts[handle]!, end: this.ends[handle]! } as EncodedField;
  }

  get length(): number {
    return this.blocks.length;
  }

  /** Forgets every span from the `length`th on. */
  truncate(length: number): void {
    this.blocks.length = length;
    this.starts.length = length;
    this.ends.length = length;
  }
}

export class TabSeparatedRows<Row extends Record<keyof Row, Cell>> {
  private readonly bytes = new ByteBlocks();
  private rows = 0;
  /** Whether each column holds JSON text (see `tabSeparatedJson`). */
  readonly json: readonly boolean[];
  /** The row being added, field by field; kept to spare an array per row. */
  private readonly fields: (string | EncodedField)[];

  /** `jsonColumns` hold JSON text with every control character escaped (see `tabSeparatedJson`), which is escaped more cheaply. */
  constructor(
    readonly columns: readonly (keyof Row & string)[],
    jsonColumns: readonly (keyof Row & string)[] = [],
  ) {
    this.json = columns.map((c) => jsonColumns.includes(c));
    this.fields = new Array<string | EncodedField>(columns.length);
  }

  get length(): number {
    return this.rows;
  }

  add(row: Row): void {
    const block = writeFields(this.bytes, row, this.columns, this.json, 0, this.fields, 1);
    block[this.bytes.used++] = NEWLINE;
    this.rows += 1;
  }

  /** Adds a row whose first columns were encoded ahead (see RowHeads): their bytes, then the rest's fields. */
  addAfterHead(head: EncodedField, headColumns: number, rest: Record<string, Cell>): void {
    const block = writeFields(this.bytes, rest, this.columns, this.json, headColumns, this.fields, 1, head);
    block[this.bytes.used++] = NEWLINE;
    this.rows += 1;
  }

  /** Takes the rows of `other` (same table) after these. */
  append(other: TabSeparatedRows<Row>): void {
    this.bytes.append(other.bytes.blocks());
    this.rows += other.rows;
  }

  /**
   * Frees the rows' memory once they are written (see `free`): neither they nor rows that took
   * them with `append` may be streamed afterwards (these refuse to). `length` still counts them,
   * for whoever reports what was written.
   */
  release(): void {
    this.bytes.release();
  }

  /**
   * Each row's bytes, its line break included: a row is always written whole into one block, and
   * a line break inside a field is escaped, so each raw line break ends a row. Views into the
   * rows' memory, valid until `release`, as are rows `withLines` makes of them.
   */
  rowLines(): Buffer[] {
    const lines: Buffer[] = [];
    for (const block of this.bytes.blocks()) {
      let start = 0;
      for (let end = block.indexOf(NEWLINE); end !== -1; start = end + 1, end = block.indexOf(NEWLINE, start)) lines.push(block.subarray(start, end + 1));
      if (start !== block.length) throw new Error('a block of rows ends inside a row');
    }
    if (lines.length !== this.rows) throw new Error(`${this.rows} rows read as ${lines.length} lines`);
    return lines;
  }

  /** Rows of the same table from lines `rowLines` gave. */
  withLines(lines: readonly Buffer[]): TabSeparatedRows<Row> {
    const rows = new TabSeparatedRows<Row>(this.columns, this.columns.filter((_, i) => this.json[i]));
    rows.bytes.append(lines);
    rows.rows = lines.length;
    return rows;
  }

  /** The rows as the body of an INSERT … FORMAT TabSeparated. */
  stream(): Readable {
    return Readable.from(this.bytes.blocks(), { objectMode: false });
  }
}

/**
 * The first columns of rows whose other columns are not known yet, encoded as soon as they are
 * known and kept outside the heap. Ingest knows an event's own fields long before its person's:
 * a chunk waits on Postgres in between, and text held that long outlived the young generation's
 * collections, copied each time. Written here at once, the text dies young.
 */
export class RowHeads<Row extends Record<keyof Row, Cell>, Head extends keyof Row & string> {
  private readonly bytes = new ByteBlocks();
  private readonly fields: (string | EncodedField)[];
  private readonly json: readonly boolean[];
  private readonly heads = new Spans();

  constructor(
    private readonly rows: TabSeparatedRows<Row>,
    readonly columns: readonly Head[],
  ) {
    if (columns.some((column, i) => rows.columns[i] !== column)) throw new Error(`row heads ${columns.join(',')} are not the first columns of ${rows.columns.join(',')}`);
    this.fields = new Array<string | EncodedField>(columns.length);
    this.json = rows.json.slice(0, columns.length);
  }

  /** Encodes a row's first columns; the number it returns completes the row. */
  add(head: Pick<Row, Head>): number {
    const block = writeFields(this.bytes, head as Record<string, Cell>, this.columns, this.json, 0, this.fields, 0);
    return this.heads.add(block, this.bytes.start, this.bytes.used);
  }

  /** Adds the row to its table, the rest of its columns after its head. */
  complete(handle: number, rest: Omit<Row, Head>): void {
    this.rows.addAfterHead(this.heads.of(handle), this.columns.length, rest as Record<string, Cell>);
  }

  /** Frees the heads' memory once every row that will be completed was (see `free`). */
  release(): void {
    this.bytes.release();
    this.heads.truncate(0);
  }
}

/** Where the next field of an EncodedJsonFields would go (see `rewind`). */
export interface FieldsMark {
  bytes: BlocksMark;
  fields: number;
}

/**
 * JSON text encoded as TabSeparated fields ahead of the rows that will hold them, kept outside
 * the heap, for text that would otherwise wait on the heap (or keep alive what it is made from)
 * until its row can be completed. `add` gives the number that `field` takes.
 */
export class EncodedJsonFields {
  private readonly bytes = new ByteBlocks();
  private readonly fields = new Spans();

  add(json: string): number {
    const field = tabSeparatedJson(json);
    const block = this.bytes.room(field.length * 3);
    this.bytes.used += block.write(field, this.bytes.start);
    return this.fields.add(block, this.bytes.start, this.bytes.used);
  }

  /** The field to give a row's column (see Cell); valid until `release`, or a `rewind` to before it. */
  field(handle: number): EncodedField {
    if (this.bytes.released) throw new Error('fields used after they were released');
    return this.fields.of(handle);
  }

  mark(): FieldsMark {
    return { bytes: this.bytes.mark(), fields: this.fields.length };
  }

  /** Takes back every field added since `mark`: their numbers are given again, their memory written over or freed. */
  rewind(mark: FieldsMark): void {
    this.bytes.rewind(mark.bytes);
    this.fields.truncate(mark.fields);
  }

  /** Frees the fields' memory once every row that holds one was completed (see `free`). */
  release(): void {
    this.bytes.release();
    this.fields.truncate(0);
  }
}
