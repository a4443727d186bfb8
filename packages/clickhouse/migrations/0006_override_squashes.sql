-- Each finished override squash of a project (issue 60): every move stored before `settled_before`
-- is squashed, so persons-on-events queries group only the identity rows stored since, not every
-- id that ever moved.
CREATE TABLE IF NOT EXISTS override_squashes (
  team_id Int64,
  settled_before DateTime('UTC')
) ENGINE = ReplacingMergeTree(settled_before)
ORDER BY team_id;
