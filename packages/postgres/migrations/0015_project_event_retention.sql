-- Up Migration
-- Days a project's events are kept; the worker's daily retention job deletes older ones (issue 63).
-- Null, the default, keeps them until deleted otherwise.
ALTER TABLE projects ADD COLUMN event_retention_days integer CHECK (event_retention_days > 0);

-- Down Migration
ALTER TABLE projects DROP COLUMN event_retention_days;
