-- Up Migration
-- A backfill's progress is counted from its runs each time it is read (issue 58).
CREATE INDEX batch_export_runs_backfill ON batch_export_runs (backfill_id) WHERE backfill_id IS NOT NULL;

-- Down Migration
DROP INDEX batch_export_runs_backfill;
