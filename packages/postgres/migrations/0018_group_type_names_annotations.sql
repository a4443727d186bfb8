-- Up Migration
-- Group types carry the names PostHog's UI shows for them (issue 61); null until someone names them.
ALTER TABLE group_type_mappings
  ADD COLUMN name_singular text CHECK (length(name_singular) <= 400),
  ADD COLUMN name_plural text CHECK (length(name_plural) <= 400);

-- Notes on a date, as PostHog keeps them: on one insight, one dashboard, the project or its whole
-- organization (an organization-wide one shows in every project of the organization).
CREATE TABLE annotations (
  id serial PRIMARY KEY,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  content text NOT NULL DEFAULT '',
  date_marker timestamptz,
  creation_type text NOT NULL DEFAULT 'USR' CHECK (creation_type IN ('USR', 'GIT')),
  scope text NOT NULL DEFAULT 'dashboard_item' CHECK (scope IN ('dashboard_item', 'dashboard', 'project', 'organization')),
  insight_id integer REFERENCES insights (id) ON DELETE SET NULL,
  dashboard_id integer REFERENCES dashboards (id) ON DELETE SET NULL,
  deleted boolean NOT NULL DEFAULT false,
  created_by integer REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX annotations_team ON annotations (team_id, date_marker DESC) WHERE NOT deleted;
CREATE INDEX annotations_organization ON annotations (organization_id) WHERE scope = 'organization' AND NOT deleted;

-- Down Migration
DROP TABLE annotations;
ALTER TABLE group_type_mappings DROP COLUMN name_singular, DROP COLUMN name_plural;
