import { randomUUID } from 'node:crypto';
import { withTransaction, type Pool } from '@tributary/postgres';
import { backfillWindows, dueWindows, windowStart, type ExportInterval, type ExportWindow } from './windows.js';

export type ExportModel = 'events' | 'persons';
export type DestinationType = 'S3' | 'Postgres' | 'HTTP';
/** PostHog's run and backfill statuses. */
export type RunStatus = 'Starting' | 'Running' | 'Completed' | 'Failed' | 'FailedRetryable' | 'Cancelled';

export interface BatchExportRow {
  id: string;
  team_id: number;
  name: string;
  model: ExportModel;
  destination_type: DestinationType;
  destination_config: Record<string, unknown>;
  interval: ExportInterval;
  paused: boolean;
  start_at: Date | null;
  end_at: Date | null;
  last_paused_at: Date | null;
  scheduled_until: Date;
  created_at: Date;
  last_updated_at: Date;
}

/** Where a run stopped: the last exported row's key. */
export interface RunCursor {
  /** The row's time the run selects by (`windowTimeOf`): `inserted_at`, or a backfill's `timestamp`; the name is kept so stored cursors still read. */
  inserted_at: string;
  key: string;
}

export interface RunRow {
  id: string;
  batch_export_id: string;
  team_id: number;
  backfill_id: string | null;
  data_interval_start: Date;
  data_interval_end: Date;
  status: RunStatus;
  records_completed: number;
  records_total_count: number | null;
  bytes_exported: number;
  parts_completed: number;
  cursor: RunCursor | null;
  attempts: number;
  latest_error: string | null;
  created_at: Date;
  finished_at: Date | null;
  last_updated_at: Date;
}

export interface BackfillRow {
  id: string;
  batch_export_id: string;
  team_id: number;
  start_at: Date;
  end_at: Date;
  status: RunStatus;
  created_at: Date;
  finished_at: Date | null;
  last_updated_at: Date;
  /** Counted from its runs: one per window. */
  total_runs: number;
  /** Windows exported: runs Completed. */
  finished_runs: number;
  records_completed: number;
  /** The records of the windows counted so far (a run counts its window as it starts); null before any is. */
  total_records_count: number | null;
}

export interface NewBatchExport {
  name: string;
  model: ExportModel;
  destination: { type: DestinationType; config: Record<string, unknown> };
  interval: ExportInterval;
  paused: boolean;
  start_at: Date | null;
  end_at: Date | null;
}

const EXPORT_COLUMNS = 'id, team_id, name, model, destination_type, destination_config, interval, paused, start_at, end_at, last_paused_at, scheduled_until, created_at, last_updated_at';
const RUN_COLUMNS = `id, batch_export_id, team_id, backfill_id, data_interval_start, data_interval_end, status, records_completed, records_total_count,
  bytes_exported, parts_completed, cursor, attempts, latest_error, created_at, finished_at, last_updated_at`;
const BACKFILL_COLUMNS = 'id, batch_export_id, team_id, start_at, end_at, status, created_at, finished_at, last_updated_at';
/** A backfill with its progress, from `batch_export_backfills b`. */
const BACKFILL_WITH_PROGRESS = `b.id, b.batch_export_id, b.team_id, b.start_at, b.end_at, b.status, b.created_at, b.finished_at, b.last_updated_at,
  p.total_runs, p.finished_runs, p.records_completed, p.total_records_count
  FROM batch_export_backfills b CROSS JOIN LATERAL (
    SELECT count(*)::int AS total_runs, (count(*) FILTER (WHERE status = 'Completed'))::int AS finished_runs,
      COALESCE(sum(records_completed), 0)::float8 AS records_completed, sum(records_total_count)::float8 AS total_records_count
    FROM batch_export_runs WHERE backfill_id = b.id) p`;

/** Runs that may be (re)started: waiting, retrying, or running under a lease that ran out (its worker died); as in claimableRuns. */
const CLAIMABLE = `(status IN ('Starting', 'FailedRetryable') OR (status = 'Running' AND locked_until < now()))`;

/** Batch exports, their runs and backfills, in Postgres: what the api edits and the worker schedules and runs. */
export class BatchExportStore {
  constructor(private readonly pool: Pool) {}

  async create(teamId: number, fields: NewBatchExport, now: Date): Promise<BatchExportRow> {
    // The first window is the one the export starts in (its start_at, or now).
    const scheduledFrom = windowStart(fields.start_at ?? now, fields.interval);
    const { rows } = await this.pool.query<BatchExportRow>(
      `INSERT INTO batch_exports (id, team_id, name, model, destination_type, destination_config, interval, paused, start_at, end_at, scheduled_until, last_paused_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, CASE WHEN $8 THEN now() END) RETURNING ${EXPORT_COLUMNS}`,
      [randomUUID(), teamId, fields.name, fields.model, fields.destination.type, fields.destination.config, fields.interval, fields.paused, fields.start_at, fields.end_at, scheduledFrom],
    );
    return rows[0]!;
  }

  async list(teamId: number, limit: number, offset: number): Promise<{ count: number; results: BatchExportRow[] }> {
    const [{ rows }, count] = await Promise.all([
      this.pool.query<BatchExportRow>(`SELECT ${EXPORT_COLUMNS} FROM batch_exports WHERE team_id = $1 AND NOT deleted ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`, [teamId, limit, offset]),
      this.pool.query<{ count: number }>('SELECT count(*)::int AS count FROM batch_exports WHERE team_id = $1 AND NOT deleted', [teamId]),
    ]);
    return { count: count.rows[0]!.count, results: rows };
  }

  async get(teamId: number, id: string): Promise<BatchExportRow | null> {
    const { rows } = await this.pool.query<BatchExportRow>(`SELECT ${EXPORT_COLUMNS} FROM batch_exports WHERE team_id = $1 AND id = $2 AND NOT deleted`, [teamId, id]);
    return rows[0] ?? null;
  }

  async update(teamId: number, id: string, changes: Partial<Pick<NewBatchExport, 'name' | 'destination' | 'interval' | 'start_at' | 'end_at'>>): Promise<BatchExportRow | null> {
    const { rows } = await this.pool.query<BatchExportRow>(
      `UPDATE batch_exports SET name = COALESCE($3, name), destination_type = COALESCE($4, destination_type), destination_config = COALESCE($5, destination_config),
         interval = COALESCE($6, interval), start_at = COALESCE($7, start_at), end_at = COALESCE($8, end_at), last_updated_at = now()
       WHERE team_id = $1 AND id = $2 AND NOT deleted RETURNING ${EXPORT_COLUMNS}`,
      [teamId, id, changes.name ?? null, changes.destination?.type ?? null, changes.destination?.config ?? null, changes.interval ?? null, changes.start_at ?? null, changes.end_at ?? null],
    );
    return rows[0] ?? null;
  }

  /** Deleted exports are never scheduled again; their waiting runs are cancelled. */
  async softDelete(teamId: number, id: string): Promise<boolean> {
    return withTransaction(this.pool, async (client) => {
      const result = await client.query('UPDATE batch_exports SET deleted = true, last_updated_at = now() WHERE team_id = $1 AND id = $2 AND NOT deleted', [teamId, id]);
      if (result.rowCount !== 1) return false;
      await client.query(`UPDATE batch_export_runs SET status = 'Cancelled', finished_at = now(), last_updated_at = now() WHERE batch_export_id = $1 AND status IN ('Starting', 'FailedRetryable')`, [id]);
      return true;
    });
  }

  /**
   * Pausing stops the schedule; unpausing resumes it from the current window, as PostHog's does:
   * the windows of the pause are not exported unless backfilled.
   */
  async setPaused(teamId: number, id: string, paused: boolean, now: Date): Promise<BatchExportRow | null> {
    const row = await this.get(teamId, id);
    if (!row) return null;
    if (row.paused === paused) return row;
    const resumeFrom = windowStart(now, row.interval);
    const { rows } = await this.pool.query<BatchExportRow>(
      `UPDATE batch_exports SET paused = $3, last_paused_at = CASE WHEN $3 THEN now() ELSE last_paused_at END,
         scheduled_until = CASE WHEN $3 THEN scheduled_until ELSE GREATEST(scheduled_until, $4) END, last_updated_at = now()
       WHERE team_id = $1 AND id = $2 AND NOT deleted RETURNING ${EXPORT_COLUMNS}`,
      [teamId, id, paused, resumeFrom],
    );
    return rows[0] ?? null;
  }

  async runs(batchExportId: string, limit: number, offset: number): Promise<{ count: number; results: RunRow[] }> {
    const [{ rows }, count] = await Promise.all([
      this.pool.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM batch_export_runs WHERE batch_export_id = $1 ORDER BY data_interval_start DESC, created_at DESC LIMIT $2 OFFSET $3`, [batchExportId, limit, offset]),
      this.pool.query<{ count: number }>('SELECT count(*)::int AS count FROM batch_export_runs WHERE batch_export_id = $1', [batchExportId]),
    ]);
    return { count: count.rows[0]!.count, results: rows };
  }

  async latestRuns(batchExportIds: string[], perExport: number): Promise<Map<string, RunRow[]>> {
    const { rows } = await this.pool.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM (SELECT *, row_number() OVER (PARTITION BY batch_export_id ORDER BY data_interval_start DESC, created_at DESC) AS n
         FROM batch_export_runs WHERE batch_export_id = ANY($1::uuid[])) r WHERE n <= $2`,
      [batchExportIds, perExport],
    );
    const byExport = new Map<string, RunRow[]>(batchExportIds.map((id) => [id, []]));
    for (const row of rows) byExport.get(row.batch_export_id)!.push(row);
    return byExport;
  }

  async run(batchExportId: string, runId: string): Promise<RunRow | null> {
    const { rows } = await this.pool.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM batch_export_runs WHERE batch_export_id = $1 AND id = $2`, [batchExportId, runId]);
    return rows[0] ?? null;
  }

  /** A finished run starts again from where it stopped: its exported parts stay, so nothing is written twice. */
  async retry(batchExportId: string, runId: string): Promise<RunRow | null> {
    const { rows } = await this.pool.query<RunRow>(
      `UPDATE batch_export_runs SET status = 'Starting', attempts = 0, finished_at = NULL, last_updated_at = now()
       WHERE batch_export_id = $1 AND id = $2 AND status IN ('Failed', 'Cancelled', 'Completed') RETURNING ${RUN_COLUMNS}`,
      [batchExportId, runId],
    );
    return rows[0] ?? null;
  }

  /** A backfill and one run per window of it, all or nothing. */
  async createBackfill(row: BatchExportRow, start: Date, end: Date): Promise<BackfillRow> {
    const id = await withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<BackfillRow>(
        `INSERT INTO batch_export_backfills (id, batch_export_id, team_id, start_at, end_at, status) VALUES ($1, $2, $3, $4, $5, 'Running') RETURNING ${BACKFILL_COLUMNS}`,
        [randomUUID(), row.id, row.team_id, start, end],
      );
      const backfill = rows[0]!;
      const windows = backfillWindows(start, end, row.interval);
      await client.query(
        `INSERT INTO batch_export_runs (id, batch_export_id, team_id, backfill_id, data_interval_start, data_interval_end, status)
         SELECT gen_random_uuid(), $1, $2, $3, w.start_at, w.end_at, 'Starting' FROM unnest($4::timestamptz[], $5::timestamptz[]) AS w (start_at, end_at)`,
        [row.id, row.team_id, backfill.id, windows.map((w) => w.start), windows.map((w) => w.end)],
      );
      return backfill.id;
    });
    return (await this.backfill(row.id, id))!;
  }

  async backfills(batchExportId: string, limit: number, offset: number): Promise<{ count: number; results: BackfillRow[] }> {
    const [{ rows }, count] = await Promise.all([
      this.pool.query<BackfillRow>(`SELECT ${BACKFILL_WITH_PROGRESS} WHERE b.batch_export_id = $1 ORDER BY b.created_at DESC LIMIT $2 OFFSET $3`, [batchExportId, limit, offset]),
      this.pool.query<{ count: number }>('SELECT count(*)::int AS count FROM batch_export_backfills WHERE batch_export_id = $1', [batchExportId]),
    ]);
    return { count: count.rows[0]!.count, results: rows };
  }

  async backfill(batchExportId: string, id: string): Promise<BackfillRow | null> {
    const { rows } = await this.pool.query<BackfillRow>(`SELECT ${BACKFILL_WITH_PROGRESS} WHERE b.batch_export_id = $1 AND b.id = $2`, [batchExportId, id]);
    return rows[0] ?? null;
  }

  /**
   * Cancels a backfill and every run of it not finished: those waiting never start, and one being
   * run stops after the part it is writing (the worker finds it cancelled when it records the part).
   */
  async cancelBackfill(batchExportId: string, id: string): Promise<BackfillRow | null> {
    await withTransaction(this.pool, async (client) => {
      const { rowCount } = await client.query(
        `UPDATE batch_export_backfills SET status = 'Cancelled', finished_at = now(), last_updated_at = now()
         WHERE batch_export_id = $1 AND id = $2 AND status IN ('Starting', 'Running')`,
        [batchExportId, id],
      );
      if (rowCount === 1) {
        await client.query(
          `UPDATE batch_export_runs SET status = 'Cancelled', locked_until = NULL, finished_at = now(), last_updated_at = now()
           WHERE backfill_id = $1 AND status IN ('Starting', 'FailedRetryable', 'Running')`,
          [id],
        );
      }
    });
    return this.backfill(batchExportId, id);
  }

  // ---- The worker's side.

  /**
   * Makes the runs of every live, unpaused export's due windows, one per window whichever worker
   * gets there first, and moves its schedule past them. Returns how many runs were made.
   */
  async scheduleDue(now: Date, settleMs: number, maxWindows: number): Promise<number> {
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<BatchExportRow>(
        `SELECT ${EXPORT_COLUMNS} FROM batch_exports WHERE NOT deleted AND NOT paused AND (end_at IS NULL OR scheduled_until < end_at) FOR UPDATE SKIP LOCKED`,
      );
      let made = 0;
      for (const row of rows) {
        const windows: ExportWindow[] = dueWindows(row.scheduled_until, row.interval, now, settleMs, row.end_at, maxWindows);
        if (windows.length === 0) continue;
        const inserted = await client.query(
          `INSERT INTO batch_export_runs (id, batch_export_id, team_id, data_interval_start, data_interval_end, status)
           SELECT gen_random_uuid(), $1, $2, w.start_at, w.end_at, 'Starting' FROM unnest($3::timestamptz[], $4::timestamptz[]) AS w (start_at, end_at)
           ON CONFLICT DO NOTHING`,
          [row.id, row.team_id, windows.map((w) => w.start), windows.map((w) => w.end)],
        );
        made += inserted.rowCount ?? 0;
        await client.query('UPDATE batch_exports SET scheduled_until = $2 WHERE id = $1', [row.id, windows.at(-1)!.end]);
      }
      return made;
    });
  }

  /** Runs that wait for a worker (or whose worker died), of live unpaused exports (and every backfill), oldest window first. */
  async claimableRuns(limit: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT r.id FROM batch_export_runs r JOIN batch_exports e ON e.id = r.batch_export_id AND NOT e.deleted
       WHERE (r.status IN ('Starting', 'FailedRetryable') OR (r.status = 'Running' AND r.locked_until < now())) AND (NOT e.paused OR r.backfill_id IS NOT NULL)
       ORDER BY r.data_interval_start LIMIT $1`,
      [limit],
    );
    return rows.map((r) => r.id);
  }

  /** Takes a run for `leaseMs`, or null when another worker holds it or it needs nothing. */
  async claim(runId: string, leaseMs: number): Promise<{ run: RunRow; export: BatchExportRow } | null> {
    const { rows } = await this.pool.query<RunRow>(
      `UPDATE batch_export_runs SET status = 'Running', attempts = attempts + 1, locked_until = now() + make_interval(secs => $2), last_updated_at = now()
       WHERE id = $1 AND ${CLAIMABLE} RETURNING ${RUN_COLUMNS}`,
      [runId, leaseMs / 1000],
    );
    const run = rows[0];
    if (!run) return null;
    const exported = await this.pool.query<BatchExportRow>(`SELECT ${EXPORT_COLUMNS} FROM batch_exports WHERE id = $1`, [run.batch_export_id]);
    return { run, export: exported.rows[0]! };
  }

  /**
   * Records a written part, and extends the lease: the run continues after `cursor`. False when
   * the run was cancelled meanwhile: it is to stop (the part is counted, as it was written).
   */
  async partWritten(runId: string, part: { cursor: RunCursor; records: number; bytes: number }, leaseMs: number): Promise<boolean> {
    const { rows } = await this.pool.query<{ running: boolean }>(
      `UPDATE batch_export_runs SET parts_completed = parts_completed + 1, cursor = $2, records_completed = records_completed + $3, bytes_exported = bytes_exported + $4,
         locked_until = CASE WHEN status = 'Running' THEN now() + make_interval(secs => $5) END, last_updated_at = now() WHERE id = $1 RETURNING status = 'Running' AS running`,
      [runId, part.cursor, part.records, part.bytes, leaseMs / 1000],
    );
    return rows[0]?.running ?? false;
  }

  async setTotal(runId: string, total: number): Promise<void> {
    await this.pool.query('UPDATE batch_export_runs SET records_total_count = $2, last_updated_at = now() WHERE id = $1 AND records_total_count IS NULL', [runId, total]);
  }

  async finish(runId: string, status: 'Completed' | 'Failed' | 'FailedRetryable', error: string | null): Promise<void> {
    await withTransaction(this.pool, async (client) => {
      // The runs of a backfill finish one at a time: two finishing at once (two workers, or one
      // running several) would each see the other still running, and neither would end the backfill.
      await client.query(
        'SELECT 1 FROM batch_export_backfills WHERE id = (SELECT backfill_id FROM batch_export_runs WHERE id = $1) FOR UPDATE',
        [runId],
      );
      const { rows } = await client.query<{ backfill_id: string | null }>(
        `UPDATE batch_export_runs SET status = $2, latest_error = COALESCE($3, latest_error), locked_until = NULL, last_updated_at = now(),
           finished_at = CASE WHEN $2 = 'FailedRetryable' THEN NULL ELSE now() END
         WHERE id = $1 AND status = 'Running' RETURNING backfill_id`,
        [runId, status, error],
      );
      const backfill = rows[0]?.backfill_id;
      // A backfill is over when none of its runs is left to do: Failed if any failed.
      if (backfill) {
        await client.query(
          `UPDATE batch_export_backfills b SET status = CASE WHEN EXISTS (SELECT 1 FROM batch_export_runs WHERE backfill_id = b.id AND status = 'Failed') THEN 'Failed' ELSE 'Completed' END,
             finished_at = now(), last_updated_at = now()
           WHERE b.id = $1 AND b.status = 'Running' AND NOT EXISTS (SELECT 1 FROM batch_export_runs WHERE backfill_id = b.id AND status NOT IN ('Completed', 'Failed', 'Cancelled'))`,
          [backfill],
        );
      }
    });
  }
}
