import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ImportEvent } from './import-record.js';
import { readRecords, type ImportFormat } from './read-records.js';

/**
 * What survives a crash: which file, and how many of its records are known to be in Kafka. It
 * is written after each batch capture acknowledged, so a resumed import re-sends at most the
 * one batch that was in flight, whose events keep their uuids and so are stored once.
 */
export interface Checkpoint {
  file: string;
  size: number;
  project: number;
  /** Records (valid or not) of the file that need no sending again. */
  records: number;
  events: number;
  invalid: number;
  updatedAt: string;
}

export const checkpointPathOf = (file: string) => `${file}.import-checkpoint.json`;

export async function readCheckpoint(checkpointPath: string): Promise<Checkpoint | null> {
  try {
    return JSON.parse(await readFile(checkpointPath, 'utf8')) as Checkpoint;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

async function writeCheckpoint(checkpointPath: string, checkpoint: Checkpoint): Promise<void> {
  // Written beside and renamed over, so a crash mid-write leaves the previous checkpoint whole.
  const temporary = `${checkpointPath}.tmp`;
  await writeFile(temporary, JSON.stringify(checkpoint));
  await rename(temporary, checkpointPath);
}

export interface ImportOptions {
  file: string;
  format: ImportFormat;
  project: number;
  /** Sends one batch; absent in a dry run, which only reads and checks. */
  send: ((events: readonly ImportEvent[]) => Promise<void>) | null;
  batchSize: number;
  /** A batch also closes at this many bytes of JSON, well under capture's 20 MB body limit. */
  maxBatchBytes?: number;
  resume: boolean;
  checkpointPath?: string;
  onProgress?: (progress: { bytesRead: number; totalBytes: number; events: number; invalid: number }) => void;
  onInvalid?: (line: number, reason: string) => void;
}

export interface ImportResult {
  /** Events sent (or, in a dry run, found valid) over the whole file, resumed runs included. */
  events: number;
  /** Events this run read and sent (or checked): what its rate is of. */
  thisRun: number;
  invalid: number;
  /** Records skipped because a checkpoint said they were already sent. */
  resumedFrom: number;
  seconds: number;
}

/** Reads the file in order and sends it batch by batch, one batch in flight, checkpointing each. */
export async function importFile(options: ImportOptions): Promise<ImportResult> {
  const started = process.hrtime.bigint();
  const file = path.resolve(options.file);
  const { size } = await stat(file);
  const checkpointPath = options.checkpointPath ?? checkpointPathOf(file);
  const maxBatchBytes = options.maxBatchBytes ?? 5 * 1024 * 1024;

  let resumedFrom = 0;
  let events = 0;
  let invalid = 0;
  if (options.resume && options.send) {
    const checkpoint = await readCheckpoint(checkpointPath);
    if (checkpoint) {
      if (checkpoint.file !== file || checkpoint.size !== size || checkpoint.project !== options.project) {
        throw new Error(`the checkpoint ${checkpointPath} belongs to another import (${checkpoint.file}, ${checkpoint.size} bytes, project ${checkpoint.project})`);
      }
      ({ records: resumedFrom, events, invalid } = checkpoint);
    }
  }

  const eventsBefore = events;
  let bytesRead = 0;
  let batch: ImportEvent[] = [];
  let batchBytes = 0;
  let records = resumedFrom;
  const progress = () => options.onProgress?.({ bytesRead, totalBytes: size, events, invalid });

  const flush = async () => {
    if (batch.length === 0 || !options.send) return;
    await options.send(batch);
    events += batch.length;
    batch = [];
    batchBytes = 0;
    await writeCheckpoint(checkpointPath, { file, size, project: options.project, records, events, invalid, updatedAt: new Date().toISOString() });
    progress();
  };

  for await (const record of readRecords(file, options.format, (n) => (bytesRead += n))) {
    if (record.index < resumedFrom) continue;
    records = record.index + 1;
    if (!record.result.ok) {
      invalid++;
      options.onInvalid?.(record.line, record.result.reason);
      continue;
    }
    if (!options.send) {
      events++;
      if (events % 10_000 === 0) progress();
      continue;
    }
    const bytes = JSON.stringify(record.result.event).length + 1;
    if (batch.length > 0 && batchBytes + bytes > maxBatchBytes) {
      // The record just read is not in this batch, so the checkpoint must not count it yet.
      records--;
      await flush();
      records++;
    }
    batch.push(record.result.event);
    batchBytes += bytes;
    if (batch.length >= options.batchSize) await flush();
  }
  await flush();
  progress();
  return { events, thisRun: events - eventsBefore, invalid, resumedFrom, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}
