import { Router, type Request } from 'express';
import { BatchExportStore, destinationRefusal, type BackfillRow, type BatchExportRow, type DestinationGuard, type DestinationSpec, type NewBatchExport, type RunRow } from '@tributary/batch-exports';
import { PAGE_SCHEMA, badRequest, documented, notFound, pageOf } from '@tributary/http';
import { projectOf, requireScopes } from '../auth/authenticate.js';
import { pageLinks } from '../http/responses.js';
import { uuidParam } from '../http/uuid.js';
import { backfillSchema, createBatchExportSchema, parseBackfill, parseCreateBatchExport, parsePatchBatchExport, patchBatchExportSchema, publicConfig } from './batch-export-requests.js';

const iso = (date: Date | null) => (date ? date.toISOString() : null);

function presentRun(run: RunRow) {
  return {
    id: run.id,
    status: run.status,
    records_completed: Number(run.records_completed),
    records_total_count: run.records_total_count === null ? null : Number(run.records_total_count),
    bytes_exported: Number(run.bytes_exported),
    latest_error: run.latest_error,
    data_interval_start: iso(run.data_interval_start),
    data_interval_end: iso(run.data_interval_end),
    cursor: run.cursor ? JSON.stringify(run.cursor) : null,
    created_at: iso(run.created_at),
    finished_at: iso(run.finished_at),
    last_updated_at: iso(run.last_updated_at),
    batch_export: run.batch_export_id,
    backfill: run.backfill_id,
  };
}

function presentExport(row: BatchExportRow, latestRuns: RunRow[]) {
  return {
    id: row.id,
    team_id: row.team_id,
    name: row.name,
    model: row.model,
    destination: { type: row.destination_type, config: publicConfig(row.destination_type, row.destination_config) },
    interval: row.interval,
    paused: row.paused,
    created_at: iso(row.created_at),
    last_updated_at: iso(row.last_updated_at),
    last_paused_at: iso(row.last_paused_at),
    start_at: iso(row.start_at),
    end_at: iso(row.end_at),
    latest_runs: latestRuns.map(presentRun),
    hogql_query: '',
    schema: null,
  };
}

function presentBackfill(row: BackfillRow) {
  return {
    id: row.id,
    team_id: row.team_id,
    batch_export: row.batch_export_id,
    start_at: iso(row.start_at),
    end_at: iso(row.end_at),
    status: row.status,
    created_at: iso(row.created_at),
    finished_at: iso(row.finished_at),
    last_updated_at: iso(row.last_updated_at),
    // PostHog's progress: windows exported of the backfill's windows.
    progress: { total_runs: row.total_runs, finished_runs: row.finished_runs, progress: row.total_runs === 0 ? null : row.finished_runs / row.total_runs },
    total_records_count: row.total_records_count,
    records_completed: row.records_completed,
  };
}

const LATEST_RUNS = 10;

/** A destination must be someone else's server when saved (the worker checks again as it connects); a 400 names the field and why. */
async function checkReachable(guard: DestinationGuard, destination: NewBatchExport['destination'] | undefined): Promise<void> {
  if (!destination) return;
  const refusal = await destinationRefusal(destination as unknown as DestinationSpec, guard);
  if (refusal) throw badRequest(`destination.config.${refusal.field} is refused: ${refusal.reason}.`, `destination.config.${refusal.field}`, 'destination_not_allowed');
}

/**
 * `/batch_exports/`: PostHog's batch export API. The api keeps the exports, runs and backfills in
 * Postgres; the worker schedules the windows and runs them (see services/worker/src/batch-exports).
 */
export function batchExportRoutes(deps: { batchExports: BatchExportStore; publicUrl: string; destinationGuard: DestinationGuard }): Router {
  const router = Router({ mergeParams: true });
  const store = deps.batchExports;
  const read = requireScopes('batch_export:read');
  const write = requireScopes('batch_export:write');

  const exportOf = async (req: Request): Promise<BatchExportRow> => {
    const row = await store.get(projectOf(req).id, uuidParam(req.params.id, 'Batch export'));
    if (!row) throw notFound(`Batch export ${req.params.id} does not exist.`);
    return row;
  };
  const withRuns = async (row: BatchExportRow) => presentExport(row, (await store.latestRuns([row.id], LATEST_RUNS)).get(row.id) ?? []);

  router.get('/', read, documented({ summary: 'List batch exports', query: PAGE_SCHEMA }), async (req, res) => {
    const page = pageOf(req);
    const { count, results } = await store.list(projectOf(req).id, page.limit, page.offset);
    const runs = await store.latestRuns(results.map((r) => r.id), LATEST_RUNS);
    res.json({ count, ...pageLinks(deps.publicUrl, req, page, count), results: results.map((row) => presentExport(row, runs.get(row.id) ?? [])) });
  });

  router.post('/', write, documented({ summary: 'Create a batch export (model events or persons; destination S3, Postgres or HTTP)', body: createBatchExportSchema }), async (req, res) => {
    const fields = parseCreateBatchExport(req.body);
    await checkReachable(deps.destinationGuard, fields.destination);
    const row = await store.create(projectOf(req).id, fields, new Date());
    res.status(201).json(presentExport(row, []));
  });

  router.get('/:id', read, documented({ summary: 'Retrieve a batch export with its latest runs' }), async (req, res) => {
    res.json(await withRuns(await exportOf(req)));
  });

  router.patch('/:id', write, documented({ summary: 'Update a batch export (a destination config is merged into the stored one)', body: patchBatchExportSchema }), async (req, res) => {
    const row = await exportOf(req);
    const changes = parsePatchBatchExport(req.body, row);
    await checkReachable(deps.destinationGuard, changes.destination);
    const updated = await store.update(row.team_id, row.id, changes);
    res.json(await withRuns(updated!));
  });

  router.delete('/:id', write, documented({ summary: 'Delete a batch export; its waiting runs are cancelled' }), async (req, res) => {
    const row = await exportOf(req);
    await store.softDelete(row.team_id, row.id);
    res.status(204).end();
  });

  for (const [action, paused] of [['pause', true], ['unpause', false]] as const) {
    router.post(`/:id/${action}`, write, documented({ summary: paused ? 'Pause a batch export' : 'Unpause a batch export: it resumes from the current window' }), async (req, res) => {
      const row = await exportOf(req);
      res.json(await withRuns((await store.setPaused(row.team_id, row.id, paused, new Date()))!));
    });
  }

  router.get('/:id/runs', read, documented({ summary: "List a batch export's runs, newest window first", query: PAGE_SCHEMA }), async (req, res) => {
    const row = await exportOf(req);
    const page = pageOf(req);
    const { count, results } = await store.runs(row.id, page.limit, page.offset);
    res.json({ count, ...pageLinks(deps.publicUrl, req, page, count), results: results.map(presentRun) });
  });

  const runOf = async (req: Request) => {
    const row = await exportOf(req);
    const run = await store.run(row.id, uuidParam(req.params.run_id, 'Run'));
    if (!run) throw notFound(`Run ${req.params.run_id} does not exist.`);
    return { row, run };
  };

  router.get('/:id/runs/:run_id', read, documented({ summary: 'Retrieve a run' }), async (req, res) => {
    res.json(presentRun((await runOf(req)).run));
  });

  router.post('/:id/runs/:run_id/retry', write, documented({ summary: 'Run a finished run again: it resumes after the parts it wrote' }), async (req, res) => {
    const { row, run } = await runOf(req);
    const retried = await store.retry(row.id, run.id);
    if (!retried) throw badRequest(`Run ${run.id} is ${run.status}: only a finished run can be retried.`, 'run_id', 'run_not_finished');
    res.json(presentRun(retried));
  });

  const createBackfill = async (req: Request) => {
    const row = await exportOf(req);
    const { start, end } = parseBackfill(req.body, new Date());
    return presentBackfill(await store.createBackfill(row, start, end));
  };
  router.post('/:id/backfills', write, documented({ summary: 'Backfill a range: one run per window of it', body: backfillSchema }), async (req, res) => {
    res.status(201).json(await createBackfill(req));
  });
  // PostHog's older route for the same.
  router.post('/:id/backfill', write, documented({ summary: 'Backfill a range (the older route)', body: backfillSchema }), async (req, res) => {
    res.json({ backfill_id: (await createBackfill(req)).id });
  });

  router.get('/:id/backfills', read, documented({ summary: "List a batch export's backfills", query: PAGE_SCHEMA }), async (req, res) => {
    const row = await exportOf(req);
    const page = pageOf(req);
    const { count, results } = await store.backfills(row.id, page.limit, page.offset);
    res.json({ count, ...pageLinks(deps.publicUrl, req, page, count), results: results.map(presentBackfill) });
  });

  router.get('/:id/backfills/:backfill_id', read, documented({ summary: 'Retrieve a backfill' }), async (req, res) => {
    const row = await exportOf(req);
    const backfill = await store.backfill(row.id, uuidParam(req.params.backfill_id, 'Backfill'));
    if (!backfill) throw notFound(`Backfill ${req.params.backfill_id} does not exist.`);
    res.json(presentBackfill(backfill));
  });

  router.post('/:id/backfills/:backfill_id/cancel', write, documented({ summary: 'Cancel a backfill: its runs that have not started will not' }), async (req, res) => {
    const row = await exportOf(req);
    const backfill = await store.cancelBackfill(row.id, uuidParam(req.params.backfill_id, 'Backfill'));
    if (!backfill) throw notFound(`Backfill ${req.params.backfill_id} does not exist.`);
    res.json(presentBackfill(backfill));
  });

  return router;
}
