-- Up Migration
-- The last ClickHouse version written for a deleted person or distinct id. ClickHouse keeps the
-- row with the highest version, so a person later created again with the same derived uuid, or a
-- distinct id claimed again, must start above its tombstone to be visible there.
CREATE TABLE person_tombstones (
  uuid uuid PRIMARY KEY,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  version bigint NOT NULL
);

CREATE TABLE distinct_id_tombstones (
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  distinct_id text NOT NULL,
  version bigint NOT NULL,
  PRIMARY KEY (team_id, distinct_id)
);

-- "The first distinct id" of a person (its display name, the one a split keeps) is the one it got
-- first; rows created before this column exist get numbers in no particular order.
ALTER TABLE person_distinct_ids ADD COLUMN seq bigserial;

-- Down Migration
ALTER TABLE person_distinct_ids DROP COLUMN seq;
DROP TABLE distinct_id_tombstones;
DROP TABLE person_tombstones;
