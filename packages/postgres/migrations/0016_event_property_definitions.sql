-- Up Migration
-- PostHog's event and property definitions (issue 61): what each project's events were seen to
-- hold, kept by ingest, described and tagged by the project's members. Ingest only inserts and
-- moves last_seen_at forward; descriptions, tags, verified and hidden are the API's.
CREATE TABLE event_definitions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz,
  description text NOT NULL DEFAULT '',
  tags text[] NOT NULL DEFAULT '{}',
  verified boolean NOT NULL DEFAULT false,
  verified_at timestamptz,
  verified_by integer REFERENCES users (id) ON DELETE SET NULL,
  hidden boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now(),
  updated_by integer REFERENCES users (id) ON DELETE SET NULL,
  UNIQUE (team_id, name)
);

-- type: 1 event, 2 person, 3 group (with its group_type_index), as PostHog numbers them.
-- property_type is the first one inferred, kept once set (PostHog locks it the same way).
CREATE TABLE property_definitions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name text NOT NULL,
  type smallint NOT NULL CHECK (type IN (1, 2, 3)),
  group_type_index smallint CHECK ((type = 3) = (group_type_index IS NOT NULL)),
  property_type text CHECK (property_type IN ('DateTime', 'String', 'Numeric', 'Boolean')),
  is_numerical boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  description text NOT NULL DEFAULT '',
  tags text[] NOT NULL DEFAULT '{}',
  verified boolean NOT NULL DEFAULT false,
  verified_at timestamptz,
  verified_by integer REFERENCES users (id) ON DELETE SET NULL,
  hidden boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now(),
  updated_by integer REFERENCES users (id) ON DELETE SET NULL
);
CREATE UNIQUE INDEX property_definitions_key ON property_definitions (team_id, type, (coalesce(group_type_index, -1)), name);

-- Which event properties were seen on which event names: `event_names` filters read it.
CREATE TABLE event_properties (
  team_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  event text NOT NULL,
  property text NOT NULL,
  PRIMARY KEY (team_id, event, property)
);
CREATE INDEX event_properties_property ON event_properties (team_id, property);

-- Down Migration
DROP TABLE event_properties;
DROP TABLE property_definitions;
DROP TABLE event_definitions;
