-- Up Migration
-- A project's default query modifiers (PostHog's team `modifiers`): today `personsOnEventsMode` (issue 60).
ALTER TABLE projects ADD COLUMN modifiers jsonb NOT NULL DEFAULT '{}'::jsonb;

-- Down Migration
ALTER TABLE projects DROP COLUMN modifiers;
