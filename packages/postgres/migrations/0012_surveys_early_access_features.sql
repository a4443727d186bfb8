-- Up Migration
-- PostHog's surveys. The flags a survey shows through are ordinary feature flags, so decide
-- evaluates its display conditions: `targeting_flag` holds its targeting_flag_filters, and
-- `internal_targeting_flag` leaves out whoever already answered or dismissed it.
CREATE TABLE surveys (
  id uuid PRIMARY KEY,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  type text NOT NULL CHECK (type IN ('popover', 'widget', 'api', 'external_survey')),
  questions jsonb NOT NULL,
  appearance jsonb,
  conditions jsonb,
  linked_flag_id integer REFERENCES feature_flags (id),
  targeting_flag_id integer REFERENCES feature_flags (id),
  internal_targeting_flag_id integer REFERENCES feature_flags (id),
  start_date timestamptz,
  end_date timestamptz,
  archived boolean NOT NULL DEFAULT false,
  responses_limit integer,
  schedule text CHECK (schedule IN ('once', 'recurring', 'always')),
  enable_partial_responses boolean,
  created_by integer REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- Names are unique in a project, as PostHog checks them.
CREATE UNIQUE INDEX surveys_team_name ON surveys (team_id, name);

-- PostHog's early access features: each has a flag, whose super condition
-- `$feature_enrollment/<key>` turns it on for the persons who opted in.
CREATE TABLE early_access_features (
  id uuid PRIMARY KEY,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  feature_flag_id integer REFERENCES feature_flags (id),
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  stage text NOT NULL CHECK (stage IN ('draft', 'concept', 'alpha', 'beta', 'general-availability', 'archived')),
  documentation_url text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX early_access_features_team_stage ON early_access_features (team_id, stage);
-- A flag belongs to one feature at most.
CREATE UNIQUE INDEX early_access_features_flag ON early_access_features (feature_flag_id);

-- Down Migration
DROP TABLE early_access_features;
DROP TABLE surveys;
