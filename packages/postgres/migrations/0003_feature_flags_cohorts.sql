-- Up Migration
CREATE TABLE feature_flags (
  id serial PRIMARY KEY,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  key text NOT NULL,
  name text NOT NULL DEFAULT '',
  filters jsonb NOT NULL,
  active boolean NOT NULL DEFAULT true,
  deleted boolean NOT NULL DEFAULT false,
  ensure_experience_continuity boolean NOT NULL DEFAULT false,
  version integer NOT NULL DEFAULT 1,
  created_by integer REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- Keys are unique among a project's live flags; a soft-deleted flag frees its key.
CREATE UNIQUE INDEX feature_flags_team_key_live ON feature_flags (team_id, key) WHERE NOT deleted;

CREATE TABLE cohorts (
  id serial PRIMARY KEY,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  is_static boolean NOT NULL DEFAULT false,
  filters jsonb NOT NULL DEFAULT '{}',
  deleted boolean NOT NULL DEFAULT false,
  created_by integer REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE cohort_people (
  cohort_id integer NOT NULL REFERENCES cohorts (id) ON DELETE CASCADE,
  person_id bigint NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
  PRIMARY KEY (cohort_id, person_id)
);

-- ensure_experience_continuity: the distinct id whose hash a person keeps for a flag.
CREATE TABLE feature_flag_hash_key_overrides (
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  person_id bigint NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
  feature_flag_key text NOT NULL,
  hash_key text NOT NULL,
  PRIMARY KEY (team_id, person_id, feature_flag_key)
);

-- Down Migration
DROP TABLE feature_flag_hash_key_overrides;
DROP TABLE cohort_people;
DROP TABLE cohorts;
DROP TABLE feature_flags;
