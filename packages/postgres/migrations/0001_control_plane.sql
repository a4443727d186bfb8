-- Up Migration
CREATE TABLE organizations (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id serial PRIMARY KEY,
  uuid uuid NOT NULL UNIQUE,
  email text NOT NULL UNIQUE,
  first_name text NOT NULL DEFAULT '',
  last_name text NOT NULL DEFAULT '',
  distinct_id text NOT NULL UNIQUE,
  is_email_verified boolean NOT NULL DEFAULT false,
  hedgehog_config jsonb NOT NULL DEFAULT '{}',
  role_at_organization text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Levels as PostHog numbers them: member 1, admin 8, owner 15.
CREATE TABLE organization_memberships (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  level smallint NOT NULL CHECK (level IN (1, 8, 15)),
  joined_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, user_id)
);

CREATE TABLE projects (
  id serial PRIMARY KEY,
  uuid uuid NOT NULL UNIQUE,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL,
  api_token text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Only a keyed hash of each key is stored; mask_value lets people recognise their keys.
CREATE TABLE personal_api_keys (
  id uuid PRIMARY KEY,
  user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  label text NOT NULL,
  secure_value text NOT NULL UNIQUE,
  mask_value text NOT NULL,
  scopes text[] NOT NULL,
  scoped_projects integer[],
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz
);

-- Down Migration
DROP TABLE personal_api_keys;
DROP TABLE projects;
DROP TABLE organization_memberships;
DROP TABLE users;
DROP TABLE organizations;
