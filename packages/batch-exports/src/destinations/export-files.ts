import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { ExportModel, ExportRecord } from './export-part.js';
import { jsonLine, parquetColumns, parquetRow } from './s3-columns.js';
import type { Compression, FileFormat } from './s3-key.js';

export interface FileOptions {
  model: ExportModel;
  fileFormat: FileFormat;
  compression: Compression | null;
  /** Split into files of about this many bytes each, as written; null for one file. */
  maxFileBytes: number | null;
}

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);
// Level 1 rather than zlib's 6: an export spends most of its time compressing at 6, and 1 still
// shrinks JSON lines several times over.
const GZIP_OPTIONS = { level: 1 };
// Brotli's default quality (11) is about a hundred times slower than gzip, far slower than an
// export reads; 5 compresses a little better than gzip at a small multiple of its time.
const BROTLI_OPTIONS = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } };

/**
 * The files one part becomes, in order. A part whose output is larger than `maxFileBytes` is cut
 * into as many runs of records as its size calls for, cut again wherever a run still comes out too
 * large (a single record is never cut). The result depends only on the records and the options,
 * never on timing, so a part written again gives the same files, which is what makes its S3 keys
 * overwrite rather than add.
 */
export async function encodeFiles(records: ExportRecord[], options: FileOptions): Promise<Buffer[]> {
  if (records.length === 0) return [];
  const fitRecords = <T>(encoder: Encoder<T>) => fitFiles(records.map(encoder.prepare), encoder, options.maxFileBytes);
  return options.fileFormat === 'Parquet' ? fitRecords(parquetEncoder(options)) : fitRecords(jsonLinesEncoder(options));
}

/** `encodeFiles` for JSON lines already written (newline included), cut into files the same way. */
export async function encodeLineFiles(lines: Buffer[], options: FileOptions): Promise<Buffer[]> {
  if (lines.length === 0) return [];
  return fitFiles(lines, jsonLinesEncoder(options), options.maxFileBytes);
}

async function fitFiles<T>(items: T[], encoder: Encoder<T>, maxFileBytes: number | null): Promise<Buffer[]> {
  const fit = async (items: T[]): Promise<Buffer[]> => {
    const file = await encoder.file(items);
    if (maxFileBytes === null || file.length <= maxFileBytes || items.length === 1) return [file];
    const runs = splitByWeight(items, Math.ceil(file.length / maxFileBytes), encoder.weight);
    return (await Promise.all(runs.map(fit))).flat();
  };
  return fit(items);
}

interface Encoder<T> {
  prepare(record: ExportRecord): T;
  weight(item: T): number;
  file(items: T[]): Promise<Buffer>;
}

function jsonLinesEncoder({ model, compression }: FileOptions): Encoder<Buffer> {
  return {
    // A Buffer at once: a part's lines then wait outside the JS heap, which the collector would
    // otherwise copy and scan over and over while the part fills.
    prepare: (record) => Buffer.from(jsonLine(model, record)),
    weight: (line) => line.length,
    file: async (lines) => {
      const text = Buffer.concat(lines);
      if (compression === 'gzip') return gzip(text, GZIP_OPTIONS);
      if (compression === 'brotli') return brotli(text, BROTLI_OPTIONS);
      return text;
    },
  };
}

// Parquet compresses inside the file, page by page, rather than around it.
const PARQUET_CODECS = { gzip: 'GZIP', brotli: 'BROTLI' } as const;
const PARQUET_COMPRESSORS = {
  GZIP: (input: Uint8Array) => new Uint8Array(zlib.gzipSync(input)),
  BROTLI: (input: Uint8Array) => new Uint8Array(zlib.brotliCompressSync(input, BROTLI_OPTIONS)),
};

function parquetEncoder({ model, compression }: FileOptions): Encoder<{ row: Record<string, unknown>; weight: number }> {
  const columns = parquetColumns(model);
  return {
    prepare: (record) => {
      const row = parquetRow(model, record);
      return { row, weight: JSON.stringify(row, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value)).length };
    },
    weight: (item) => item.weight,
    file: async (items) => {
      const file = parquetWriteBuffer({
        columnData: columns.map(({ name, type }) => ({ name, type, data: items.map(({ row }) => row[name]) })),
        codec: compression ? PARQUET_CODECS[compression] : 'UNCOMPRESSED',
        compressors: PARQUET_COMPRESSORS,
      });
      return Buffer.from(file);
    },
  };
}

/** Cuts items into `count` consecutive runs of about equal total weight, none empty. */
export function splitByWeight<T>(items: T[], count: number, weight: (item: T) => number): T[][] {
  const runs = Math.min(count, items.length);
  const total = items.reduce((sum, item) => sum + weight(item), 0);
  const result: T[][] = [];
  let run: T[] = [];
  let done = 0;
  items.forEach((item, i) => {
    run.push(item);
    done += weight(item);
    const left = items.length - i - 1;
    const runsLeft = runs - result.length - 1;
    if (runsLeft > 0 && (done >= (total * (result.length + 1)) / runs || left === runsLeft)) {
      result.push(run);
      run = [];
    }
  });
  result.push(run);
  return result;
}
