-- Events, deduplicated by uuid: every column of the sorting key is fixed by the Kafka message,
-- so a replayed message produces an identical key and ReplacingMergeTree folds it away; reads
-- also use LIMIT 1 BY uuid until the merge happened.
CREATE TABLE IF NOT EXISTS events (
  uuid UUID,
  event String,
  properties String,
  timestamp DateTime('UTC'),
  timestamp_ms UInt16,
  team_id Int64,
  distinct_id String,
  elements_chain String,
  created_at DateTime('UTC'),
  person_id UUID,
  person_properties String,
  person_created_at DateTime('UTC'),
  group_0 String,
  group_1 String,
  group_2 String,
  group_3 String,
  group_4 String,
  inserted_at DateTime('UTC')
) ENGINE = ReplacingMergeTree(inserted_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(toString(uuid)));
