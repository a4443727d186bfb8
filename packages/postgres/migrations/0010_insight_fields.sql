-- Up Migration
-- Saved insights as PostHog keeps them: tags, a favourite mark, and who changed the insight last.
ALTER TABLE insights
  ADD COLUMN tags text[] NOT NULL DEFAULT '{}',
  ADD COLUMN favorited boolean NOT NULL DEFAULT false,
  ADD COLUMN saved boolean NOT NULL DEFAULT true,
  ADD COLUMN last_modified_at timestamptz NOT NULL DEFAULT now(),
  ADD COLUMN last_modified_by integer REFERENCES users (id) ON DELETE SET NULL;
CREATE INDEX insights_team ON insights (team_id, last_modified_at DESC) WHERE NOT deleted;

-- Down Migration
DROP INDEX insights_team;
ALTER TABLE insights DROP COLUMN tags, DROP COLUMN favorited, DROP COLUMN saved, DROP COLUMN last_modified_at, DROP COLUMN last_modified_by;
