-- Up Migration
-- PostHog's experiments: a multivariate flag read as an A/B test. Metrics are kept as PostHog's
-- ExperimentTrendsQuery / ExperimentFunnelsQuery objects; results are computed on request.
CREATE TABLE experiments (
  id serial PRIMARY KEY,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  feature_flag_id integer NOT NULL REFERENCES feature_flags (id),
  parameters jsonb NOT NULL DEFAULT '{}',
  metrics jsonb NOT NULL DEFAULT '[]',
  metrics_secondary jsonb NOT NULL DEFAULT '[]',
  exposure_criteria jsonb,
  start_date timestamptz,
  end_date timestamptz,
  archived boolean NOT NULL DEFAULT false,
  deleted boolean NOT NULL DEFAULT false,
  created_by integer REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX experiments_team ON experiments (team_id, created_at DESC) WHERE NOT deleted;

-- Down Migration
DROP TABLE experiments;
