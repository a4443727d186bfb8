-- Query copies of the identity data whose source of truth is Postgres: versioned rows, the
-- latest version wins, deletions are rows with is_deleted = 1 at a higher version.
CREATE TABLE IF NOT EXISTS person (
  id UUID,
  created_at DateTime('UTC'),
  team_id Int64,
  properties String,
  is_identified UInt8,
  is_deleted UInt8,
  version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (team_id, id);

CREATE TABLE IF NOT EXISTS person_distinct_id (
  team_id Int64,
  distinct_id String,
  person_id UUID,
  is_deleted UInt8,
  version Int64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (team_id, distinct_id);

CREATE TABLE IF NOT EXISTS groups (
  group_type_index UInt8,
  group_key String,
  created_at DateTime('UTC'),
  team_id Int64,
  group_properties String,
  version Int64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (team_id, group_type_index, group_key);

CREATE TABLE IF NOT EXISTS ingestion_warnings (
  team_id Int64,
  source String,
  type String,
  details String,
  timestamp DateTime('UTC')
) ENGINE = MergeTree()
PARTITION BY toYYYYMM(timestamp)
ORDER BY (team_id, timestamp);
