import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { Transform, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { parse as parseCsv } from 'csv-parse';
import { fromCsvRow, toImportEvent, type RecordResult } from './import-record.js';

export type ImportFormat = 'ndjson' | 'csv';

/** One record of the file, numbered from 0 in file order (blank lines are not records). */
export interface FileRecord {
  index: number;
  /** 1-based line of the file where the record ends, for messages. */
  line: number;
  result: RecordResult;
}

/** `.csv` or `.csv.gz` is CSV; anything else is read as newline-delimited JSON. */
export function formatOf(file: string): ImportFormat {
  return /\.csv(\.gz)?$/i.test(file) ? 'csv' : 'ndjson';
}

async function isGzip(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(2), 0, 2, 0);
    return bytesRead === 2 && buffer[0] === 0x1f && buffer[1] === 0x8b;
  } finally {
    await handle.close();
  }
}

/**
 * Streams a file's records, gunzipping when it starts with gzip's magic bytes. Nothing holds
 * more than the record being read: a 10 GB export takes as little memory as a small one, and
 * the consumer's pace (one batch at a time) holds the file's reading back.
 * `onBytes` hears the file's own (compressed) bytes as they are read, for progress.
 */
export async function* readRecords(file: string, format: ImportFormat, onBytes: (bytes: number) => void = () => undefined): AsyncGenerator<FileRecord> {
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      onBytes(chunk.length);
      done(null, chunk);
    },
  });
  let stream: Readable = createReadStream(file, { highWaterMark: 1024 * 1024 }).pipe(counter);
  if (await isGzip(file)) stream = stream.pipe(createGunzip());

  let index = 0;
  if (format === 'ndjson') {
    let line = 0;
    for await (const text of createInterface({ input: stream, crlfDelay: Infinity })) {
      line++;
      if (text.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        yield { index: index++, line, result: { ok: false, reason: 'is not valid JSON' } };
        continue;
      }
      yield { index, line, result: toImportEvent(value, index, text) };
      index++;
    }
    return;
  }
  const rows = stream.pipe(parseCsv({ columns: true, skip_empty_lines: true, relax_column_count: true, bom: true, info: true }));
  for await (const { record: row, info } of rows as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
    const value = fromCsvRow(row);
    const line = info.lines;
    yield { index, line, result: 'error' in value ? { ok: false, reason: String(value.error) } : toImportEvent(value, index, JSON.stringify(row)) };
    index++;
  }
}
