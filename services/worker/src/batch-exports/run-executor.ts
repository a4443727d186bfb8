import type { ClickHouse } from '@tributary/clickhouse';
import { NonRetryableExportError, windowTimeOf, type BatchExportStore, type Destination, type DestinationSpec, type ExportPart, type ExportRecord, type RunCursor } from '@tributary/batch-exports';
import type { Logger } from '@tributary/logger';
import { countEventsWindow, encodedRowCursor, readEncodedEventsWindow, readEventsWindow, readPersonsWindow, type EncodedRow } from './window-reader.js';

export interface RunExecutorDeps {
  store: BatchExportStore;
  clickhouse: ClickHouse;
  createDestination: (spec: DestinationSpec) => Destination;
  logger: Logger;
  /** Records per part: what is written, and remembered as done, at once. */
  partRecords: number;
  /** Parts written at once while the next is read. */
  partsInFlight: number;
  /** How long a claimed run is the claimer's without news: past it, another worker resumes it. */
  leaseMs: number;
  /** Told of every part written and every run finished, for the metrics. */
  observe?: (event: { kind: 'part'; records: number; bytes: number } | { kind: 'finished'; status: 'Completed' | 'Failed' | 'FailedRetryable' }) => void;
}

export type RunOutcome = 'completed' | 'busy' | 'cancelled';

/** The run was cancelled (its backfill was) while it ran: it stops, and is not finished over its Cancelled status. */
class RunCancelled extends Error {}

/** A window's rows as one reader gives them: how each is read, where a run resumes after it, and how a part carries them. */
interface WindowRows<Row> {
  read: AsyncIterable<Row[]>;
  cursorOf(row: Row): RunCursor;
  part(rows: Row[]): Pick<ExportPart, 'records' | 'encoded'>;
}

type RecordRow = { record: ExportRecord; cursor: RunCursor };

type ReadWindow = Parameters<typeof readEventsWindow>[1];

/** Events as ClickHouse encodes them for destinations that take them so. */
const encodedEvents = (clickhouse: ClickHouse, window: ReadWindow): WindowRows<EncodedRow> => ({
  read: readEncodedEventsWindow(clickhouse, window),
  cursorOf: encodedRowCursor,
  part: (rows) => ({ records: [], encoded: rows }),
});

const windowRecords = (clickhouse: ClickHouse, model: ExportPart['model'], window: ReadWindow): WindowRows<RecordRow> => ({
  read: (model === 'events' ? readEventsWindow : readPersonsWindow)(clickhouse, window),
  cursorOf: (row) => row.cursor,
  part: (rows) => ({ records: rows.map((row) => row.record) }),
});

/**
 * Runs one export run: claims it, reads its window after its cursor, and writes it part by part,
 * recording after each part where the next one starts. A worker killed mid-part leaves the part
 * unrecorded; the next attempt writes it again where it was written before (destinations are
 * idempotent per part), so the destination gets each row once. A failure is retryable unless the
 * destination said otherwise; `lastAttempt` makes it final.
 */
export async function executeRun(runId: string, deps: RunExecutorDeps, lastAttempt: boolean): Promise<RunOutcome> {
  const claimed = await deps.store.claim(runId, deps.leaseMs);
  if (!claimed) return 'busy';
  const { run, export: batchExport } = claimed;
  const window = { teamId: run.team_id, start: run.data_interval_start, end: run.data_interval_end, by: windowTimeOf(run) };
  let destination: Destination | null = null;
  let index = run.parts_completed;
  // Parts are written while the next one is read, several at once (a destination's round trip
  // then overlaps the others' encoding), and each is recorded only once every part before it was,
  // so the cursor only ever moves past written parts. A part written but not recorded when a run
  // stops is written again, over itself, by the next attempt.
  let recorded: Promise<void> = Promise.resolve();
  const writes = new Set<Promise<void>>();

  /** Starts writing these rows as the next part, once fewer parts are being written than the worker and the destination allow. */
  const flush = async <Row>(source: WindowRows<Row>, rows: Row[]) => {
    const part: ExportPart = { exportId: batchExport.id, runId: run.id, teamId: run.team_id, model: batchExport.model, window, index, ...source.part(rows) };
    const after = source.cursorOf(rows[rows.length - 1]!);
    index += 1;
    while (writes.size >= Math.min(deps.partsInFlight, destination!.maxPartsInFlight ?? Infinity)) await Promise.race(writes);
    // A part that failed stops the run before another is started; its error is thrown here.
    await Promise.race([recorded, Promise.resolve()]);
    const written = destination!.write(part);
    const previous = recorded;
    recorded = (async () => {
      const [{ bytes }] = await Promise.all([written, previous]);
      const running = await deps.store.partWritten(run.id, { cursor: after, records: rows.length, bytes }, deps.leaseMs);
      deps.observe?.({ kind: 'part', records: rows.length, bytes });
      if (!running) throw new RunCancelled(`run ${run.id} was cancelled`);
    })();
    const settled: Promise<void> = recorded.catch(() => undefined).then(() => void writes.delete(settled));
    writes.add(settled);
  };

  const writeParts = async <Row>(source: WindowRows<Row>) => {
    let rows: Row[] = [];
    for await (const chunk of source.read) {
      for (const row of chunk) {
        rows.push(row);
        if (rows.length >= deps.partRecords) {
          await flush(source, rows);
          rows = [];
        }
      }
    }
    if (rows.length > 0) await flush(source, rows);
  };

  try {
    // The config was checked against its type's schema when saved; createDestination checks it again.
    destination = deps.createDestination({ type: batchExport.destination_type, config: batchExport.destination_config } as unknown as DestinationSpec);
    const events = batchExport.model === 'events';
    if (events && run.records_total_count === null) await deps.store.setTotal(run.id, await countEventsWindow(deps.clickhouse, window));
    const from = { ...window, cursor: run.cursor };
    if (events && destination.takesEncodedEvents) await writeParts(encodedEvents(deps.clickhouse, from));
    else await writeParts(windowRecords(deps.clickhouse, batchExport.model, from));
    await recorded;
    await deps.store.finish(run.id, 'Completed', null);
    deps.observe?.({ kind: 'finished', status: 'Completed' });
    return 'completed';
  } catch (error) {
    // Parts still being written are recorded, or not, before the run's status is.
    await Promise.all(writes);
    if (error instanceof RunCancelled) {
      deps.logger.info({ run: run.id, batchExport: batchExport.id }, 'batch export run cancelled');
      return 'cancelled';
    }
    const final = lastAttempt || error instanceof NonRetryableExportError;
    const status = final ? 'Failed' : 'FailedRetryable';
    const message = error instanceof Error ? error.message : String(error);
    deps.logger.warn({ err: error, run: run.id, batchExport: batchExport.id, status }, 'batch export run failed');
    await deps.store.finish(run.id, status, message);
    deps.observe?.({ kind: 'finished', status });
    if (final) return 'completed';
    throw error;
  } finally {
    await destination?.close().catch(() => undefined);
  }
}
