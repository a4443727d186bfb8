-- Up Migration
-- Insights bucket days, weeks and months in the project's timezone (an IANA name), as PostHog's do.
ALTER TABLE projects ADD COLUMN timezone text NOT NULL DEFAULT 'UTC';

-- Down Migration
ALTER TABLE projects DROP COLUMN timezone;
