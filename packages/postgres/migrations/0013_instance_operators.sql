-- Up Migration
-- Instance operators (PostHog's is_staff) read installation-wide figures such as /api/status/;
-- the flag is set by the CLI (`tributary users:operator`), never through the API.
ALTER TABLE users ADD COLUMN is_staff boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE users DROP COLUMN is_staff;
