import { posix } from 'node:path';
import type { WindowTime } from '../window-time.js';
import type { ExportModel } from './export-part.js';

/**
 * S3 object keys, after PostHog's S3 batch export (`get_s3_key`), so that files land where its
 * users' readers look:
 *
 *   {prefix}/{data_interval_start}-{data_interval_end}-{part}-{file}.{jsonl|parquet}[.{gz|br}]
 *
 * The prefix is rendered from PostHog's template variables (PREFIX_VARIABLES, from the window's
 * end, in UTC); the interval bounds are Python `isoformat()` strings, as PostHog writes them. PostHog
 * appends `-{file}` only when it splits a run's output into files of `max_file_size_mb`; a run here
 * is also split into parts, so both numbers are always there, each from 0. Every part of a run is a
 * function of its window, and every file of a part a function of its records and the config, so
 * writing a part again makes the same keys and overwrites its objects instead of adding copies.
 * A backfill's files are named `...-{data_interval_end}-backfill-{part}-{file}...`: it selects a
 * window's events by when they happened, not when they were stored as the schedule does, so its
 * files must not overwrite the scheduled run's of the same window; a second backfill overwrites the first's.
 * A leading `/` is dropped, as keys are relative to the bucket.
 */

const PREFIX_VARIABLES = ['year', 'month', 'day', 'hour', 'minute', 'second', 'table', 'data_interval_start', 'data_interval_end'] as const;

/** A prefix template naming only PREFIX_VARIABLES, with `{{` and `}}` for literal braces (Python's str.format). */
export const PREFIX_PATTERN = `^([^{}]|\\{\\{|\\}\\}|\\{(${PREFIX_VARIABLES.join('|')})\\})*$`;

export const FILE_FORMAT_EXTENSIONS = { JSONLines: 'jsonl', Parquet: 'parquet' } as const;
export const COMPRESSION_EXTENSIONS = { gzip: 'gz', brotli: 'br' } as const;

export type FileFormat = keyof typeof FILE_FORMAT_EXTENSIONS;
export type Compression = keyof typeof COMPRESSION_EXTENSIONS;

/** Python's `datetime.isoformat()` of a UTC time: microseconds only when not zero, `+00:00` for UTC. */
export function pythonIsoformat(time: Date): string {
  const iso = time.toISOString();
  const fraction = time.getUTCMilliseconds() === 0 ? '' : `.${iso.slice(20, 23)}000`;
  return `${iso.slice(0, 19)}${fraction}+00:00`;
}

export function renderPrefix(template: string, model: ExportModel, window: { start: Date; end: Date }): string {
  const end = window.end.toISOString();
  const values: Record<(typeof PREFIX_VARIABLES)[number], string> = {
    year: end.slice(0, 4),
    month: end.slice(5, 7),
    day: end.slice(8, 10),
    hour: end.slice(11, 13),
    minute: end.slice(14, 16),
    second: end.slice(17, 19),
    table: model,
    data_interval_start: pythonIsoformat(window.start),
    data_interval_end: pythonIsoformat(window.end),
  };
  return template.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (match, name: string | undefined) => {
    if (name === undefined) return match[0]!;
    if (!(name in values)) throw new Error(`prefix names {${name}}, which is not one of ${PREFIX_VARIABLES.map((v) => `{${v}}`).join(', ')}`);
    return values[name as keyof typeof values];
  });
}

export interface KeyOptions {
  prefix: string;
  model: ExportModel;
  window: { start: Date; end: Date; by: WindowTime };
  part: number;
  file: number;
  fileFormat: FileFormat;
  compression: Compression | null;
}

export function s3Key(options: KeyOptions): string {
  const { window } = options;
  const extension = FILE_FORMAT_EXTENSIONS[options.fileFormat] + (options.compression ? `.${COMPRESSION_EXTENSIONS[options.compression]}` : '');
  const backfill = window.by === 'timestamp' ? 'backfill-' : '';
  const name = `${pythonIsoformat(window.start)}-${pythonIsoformat(window.end)}-${backfill}${options.part}-${options.file}.${extension}`;
  const key = posix.join(renderPrefix(options.prefix, options.model, window), name);
  return key.startsWith('/') ? posix.relative('/', key) : key;
}
