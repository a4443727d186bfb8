-- Up Migration
-- PostHog's batch exports: a schedule that exports each window of data (by the time it was
-- stored) once, as one run per window; backfills are runs over past windows.
CREATE TABLE batch_exports (
  id uuid PRIMARY KEY,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name text NOT NULL,
  model text NOT NULL CHECK (model IN ('events', 'persons')),
  destination_type text NOT NULL CHECK (destination_type IN ('S3', 'Postgres', 'HTTP')),
  destination_config jsonb NOT NULL,
  interval text NOT NULL CHECK (interval IN ('hour', 'day', 'week', 'every 5 minutes')),
  paused boolean NOT NULL DEFAULT false,
  deleted boolean NOT NULL DEFAULT false,
  start_at timestamptz,
  end_at timestamptz,
  last_paused_at timestamptz,
  -- The end of the last window the scheduler made a run for: the next run starts there.
  scheduled_until timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX batch_exports_team ON batch_exports (team_id) WHERE NOT deleted;

CREATE TABLE batch_export_backfills (
  id uuid PRIMARY KEY,
  batch_export_id uuid NOT NULL REFERENCES batch_exports (id) ON DELETE CASCADE,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  start_at timestamptz NOT NULL,
  end_at timestamptz NOT NULL,
  status text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  last_updated_at timestamptz NOT NULL DEFAULT now()
);

-- `cursor` is the last exported row's key: a resumed run continues after it; `parts_completed`
-- numbers the next part, so a part rewritten after a crash lands where it landed before.
CREATE TABLE batch_export_runs (
  id uuid PRIMARY KEY,
  batch_export_id uuid NOT NULL REFERENCES batch_exports (id) ON DELETE CASCADE,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  backfill_id uuid REFERENCES batch_export_backfills (id) ON DELETE CASCADE,
  data_interval_start timestamptz NOT NULL,
  data_interval_end timestamptz NOT NULL,
  status text NOT NULL,
  records_completed bigint NOT NULL DEFAULT 0,
  records_total_count bigint,
  bytes_exported bigint NOT NULL DEFAULT 0,
  parts_completed integer NOT NULL DEFAULT 0,
  cursor jsonb,
  attempts integer NOT NULL DEFAULT 0,
  -- A running run's lease: past it, its worker is taken to have died and another resumes it.
  locked_until timestamptz,
  latest_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  last_updated_at timestamptz NOT NULL DEFAULT now()
);
-- The schedule makes one run per window, whichever worker gets there first.
CREATE UNIQUE INDEX batch_export_runs_window ON batch_export_runs (batch_export_id, data_interval_start) WHERE backfill_id IS NULL;
CREATE INDEX batch_export_runs_export ON batch_export_runs (batch_export_id, data_interval_start DESC);

-- Down Migration
DROP TABLE batch_export_runs;
DROP TABLE batch_export_backfills;
DROP TABLE batch_exports;
