-- Up Migration
-- Behavioural cohorts (issue 61): the worker computes their members in ClickHouse on a schedule
-- and lists them here, so decide answers a flag targeting one from Postgres as it does for a
-- static cohort. As PostHog's cohortpeople, members are written under a new version and the
-- cohort's `version` is moved to it in one statement: a reader joining on it sees the old
-- members or the new, never a half-written set. `pending_version` only grows, so rows a crashed
-- run left behind are always older than the next run's and are deleted with the old members.
ALTER TABLE cohorts
  ADD COLUMN version integer,
  ADD COLUMN pending_version integer NOT NULL DEFAULT 0,
  ADD COLUMN is_calculating boolean NOT NULL DEFAULT false,
  -- When the members `version` lists were read: a change of the filters after it makes the cohort due.
  ADD COLUMN last_calculation timestamptz,
  ADD COLUMN errors_calculating integer NOT NULL DEFAULT 0,
  ADD COLUMN last_error_at timestamptz,
  ADD COLUMN calculated_count integer;

CREATE TABLE cohort_calculated_people (
  cohort_id integer NOT NULL REFERENCES cohorts (id) ON DELETE CASCADE,
  version integer NOT NULL,
  person_id bigint NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
  PRIMARY KEY (cohort_id, version, person_id)
);
-- Decide's read: a person's cohorts.
CREATE INDEX cohort_calculated_people_person ON cohort_calculated_people (person_id, cohort_id, version);

-- Down Migration
DROP TABLE cohort_calculated_people;
ALTER TABLE cohorts
  DROP COLUMN version, DROP COLUMN pending_version, DROP COLUMN is_calculating, DROP COLUMN last_calculation,
  DROP COLUMN errors_calculating, DROP COLUMN last_error_at, DROP COLUMN calculated_count;
