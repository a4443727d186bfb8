-- Up Migration
-- The distinct ids that sent events without a person profile before they had a person (issue 60).
-- Such an id that later joins a person starts one version up, so person-on-events queries take
-- the id's person from the identity tables, not the personless person its old events carry.
CREATE TABLE personless_distinct_ids (
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  distinct_id text NOT NULL,
  PRIMARY KEY (team_id, distinct_id)
);

-- Down Migration
DROP TABLE personless_distinct_ids;
