-- Up Migration
-- PostHog's actions: a named OR of steps (event, URL, element and property conditions), kept as
-- PostHog's `steps_json`. Insights and HogQL's matchesAction read them as conditions over events.
CREATE TABLE actions (
  id serial PRIMARY KEY,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  tags text[] NOT NULL DEFAULT '{}',
  steps jsonb NOT NULL DEFAULT '[]',
  post_to_slack boolean NOT NULL DEFAULT false,
  slack_message_format text NOT NULL DEFAULT '',
  pinned_at timestamptz,
  deleted boolean NOT NULL DEFAULT false,
  created_by integer REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- A live action's name is unique in its project, as PostHog checks it: matchesAction finds actions by name.
CREATE UNIQUE INDEX actions_team_name ON actions (team_id, name) WHERE NOT deleted;

-- Down Migration
DROP TABLE actions;
