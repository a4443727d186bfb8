-- Up Migration
-- A member's level in one project, above what their organization membership gives them
-- (PostHog's explicit team membership). Levels: member 1, admin 8.
CREATE TABLE explicit_project_memberships (
  id uuid PRIMARY KEY,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  parent_membership_id uuid NOT NULL REFERENCES organization_memberships (id) ON DELETE CASCADE,
  level smallint NOT NULL CHECK (level IN (1, 8)),
  joined_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (team_id, parent_membership_id)
);

-- restriction_level as PostHog numbers it: 21 everyone in the project can edit, 37 only collaborators.
CREATE TABLE dashboards (
  id serial PRIMARY KEY,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name text NOT NULL DEFAULT '',
  description text NOT NULL DEFAULT '',
  pinned boolean NOT NULL DEFAULT false,
  filters jsonb NOT NULL DEFAULT '{}',
  tags text[] NOT NULL DEFAULT '{}',
  restriction_level smallint NOT NULL DEFAULT 21 CHECK (restriction_level IN (21, 37)),
  creation_mode text NOT NULL,
  deleted boolean NOT NULL DEFAULT false,
  created_by integer REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE insights (
  id serial PRIMARY KEY,
  short_id text NOT NULL,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name text NOT NULL DEFAULT '',
  description text NOT NULL DEFAULT '',
  query jsonb,
  filters jsonb NOT NULL DEFAULT '{}',
  deleted boolean NOT NULL DEFAULT false,
  created_by integer REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (team_id, short_id)
);

-- An insight can sit on several dashboards, one tile each.
CREATE TABLE dashboard_tiles (
  id serial PRIMARY KEY,
  dashboard_id integer NOT NULL REFERENCES dashboards (id) ON DELETE CASCADE,
  insight_id integer NOT NULL REFERENCES insights (id) ON DELETE CASCADE,
  layouts jsonb NOT NULL DEFAULT '{}',
  color text
);
CREATE INDEX dashboard_tiles_insight ON dashboard_tiles (insight_id);

-- One entry per resource and organization member; organization_member NULL is the resource's default.
CREATE TABLE access_controls (
  id uuid PRIMARY KEY,
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  resource text NOT NULL,
  resource_id text NOT NULL,
  organization_member uuid REFERENCES organization_memberships (id) ON DELETE CASCADE,
  access_level text NOT NULL CHECK (access_level IN ('none', 'viewer', 'editor')),
  created_by integer REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX access_controls_entry ON access_controls (team_id, resource, resource_id, organization_member) NULLS NOT DISTINCT;

-- Down Migration
DROP TABLE access_controls;
DROP TABLE dashboard_tiles;
DROP TABLE insights;
DROP TABLE dashboards;
DROP TABLE explicit_project_memberships;
