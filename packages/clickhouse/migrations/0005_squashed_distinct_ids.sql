-- The distinct ids whose events the override squash rewrote to their person as of `version`
-- (issue 60): persons-on-events queries join a moved id only while its identity row is newer.
CREATE TABLE IF NOT EXISTS squashed_distinct_ids (
  team_id Int64,
  distinct_id String,
  version Int64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (team_id, distinct_id);
