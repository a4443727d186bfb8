import { SingleBar } from 'cli-progress';
import { batchSender, ImportError } from './batch-sender.js';
import { checkpointPathOf, importFile, type ImportResult } from './import-file.js';
import { formatOf, type ImportFormat } from './read-records.js';

export interface ImportCommandOptions {
  file: string;
  project: number;
  /** The project's API key, looked up by the caller from `project`. */
  apiKey: string | null;
  url: string;
  format?: ImportFormat;
  batchSize: number;
  resume: boolean;
  dryRun: boolean;
  checkpoint?: string;
}

/** Invalid records are named one by one up to here, then only counted. */
const NAMED_INVALID = 20;

/** `tributary import`: the file through `/batch/` with a progress bar on stderr and a summary on stdout. */
export async function runImport(options: ImportCommandOptions): Promise<ImportResult> {
  const format = options.format ?? formatOf(options.file);
  const bar = new SingleBar({
    format: '{bar} {percentage}% of the file | {events} events | {rate} events/s | ETA {eta_formatted} {note}',
    hideCursor: true,
    etaBuffer: 50,
    fps: 5,
    stream: process.stderr,
    // Without a terminal (CI, a log file) a line every 10 s instead of a redrawn bar.
    noTTYOutput: true,
    notTTYSchedule: 10_000,
  });
  const started = Date.now();
  let note = '';
  let shownInvalid = 0;
  let resumedEvents: number | null = null;
  bar.start(1, 0, { events: 0, rate: 0, note });
  const send = options.dryRun
    ? null
    : batchSender({
        url: options.url,
        apiKey: options.apiKey!,
        onRetry: (attempt, delayMs, why) => {
          note = `| retry ${attempt} in ${(delayMs / 1000).toFixed(1)} s (${why})`;
        },
      });
  try {
    const result = await importFile({
      file: options.file,
      format,
      project: options.project,
      send: send
        ? async (events) => {
            await send(events);
            note = '';
          }
        : null,
      batchSize: options.batchSize,
      resume: options.resume,
      checkpointPath: options.checkpoint ?? checkpointPathOf(options.file),
      onProgress: ({ bytesRead, totalBytes, events }) => {
        bar.setTotal(Math.max(totalBytes, 1));
        resumedEvents ??= events;
        const rate = Math.round((events - resumedEvents) / Math.max((Date.now() - started) / 1000, 0.001));
        bar.update(Math.min(bytesRead, totalBytes), { events, rate, note });
      },
      onInvalid: (line, reason) => {
        if (shownInvalid++ < NAMED_INVALID) process.stderr.write(`\nline ${line}: ${reason}; skipped\n`);
      },
    });
    bar.stop();
    return result;
  } catch (error) {
    bar.stop();
    if (error instanceof ImportError) throw new Error(`${error.message}. Sent batches are checkpointed: run again with --resume to continue.`);
    throw error;
  }
}
