-- Up Migration
-- Identity source of truth. Merges lock rows with SELECT ... FOR UPDATE inside a transaction.
CREATE TABLE persons (
  id bigserial PRIMARY KEY,
  uuid uuid NOT NULL UNIQUE,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  properties jsonb NOT NULL DEFAULT '{}',
  is_identified boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  version bigint NOT NULL DEFAULT 0
);
CREATE INDEX persons_team_id_idx ON persons (team_id, id);

CREATE TABLE person_distinct_ids (
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  distinct_id text NOT NULL,
  person_id bigint NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
  version bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (team_id, distinct_id)
);
CREATE INDEX person_distinct_ids_person_idx ON person_distinct_ids (person_id);

CREATE TABLE group_type_mappings (
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  group_type text NOT NULL,
  group_type_index smallint NOT NULL CHECK (group_type_index BETWEEN 0 AND 4),
  PRIMARY KEY (team_id, group_type),
  UNIQUE (team_id, group_type_index)
);

CREATE TABLE groups (
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  group_type_index smallint NOT NULL,
  group_key text NOT NULL,
  properties jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  version bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (team_id, group_type_index, group_key)
);

-- Down Migration
DROP TABLE groups;
DROP TABLE group_type_mappings;
DROP TABLE person_distinct_ids;
DROP TABLE persons;
