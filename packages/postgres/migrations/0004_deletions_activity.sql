-- Up Migration
-- Queued "delete this person's events" requests, run by the weekly batch (Sundays 05:00 UTC).
CREATE TABLE event_deletion_requests (
  id bigserial PRIMARY KEY,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  person_uuid uuid NOT NULL,
  distinct_ids text[] NOT NULL,
  requested_by integer REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  done_at timestamptz
);
CREATE INDEX event_deletion_requests_pending ON event_deletion_requests (id) WHERE done_at IS NULL;

-- Who changed, split, merged or deleted which person, and what changed.
CREATE TABLE activity_log (
  id bigserial PRIMARY KEY,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  scope text NOT NULL,
  item_id text NOT NULL,
  activity text NOT NULL,
  user_id integer REFERENCES users (id) ON DELETE SET NULL,
  detail jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX activity_log_item ON activity_log (team_id, scope, item_id, created_at DESC);

-- Down Migration
DROP TABLE activity_log;
DROP TABLE event_deletion_requests;
