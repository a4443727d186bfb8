/** A person row as Postgres, the source of truth for identity, holds it. */
export interface PersonRecord {
  id: number;
  uuid: string;
  team_id: number;
  properties: Record<string, unknown>;
  is_identified: boolean;
  created_at: Date;
  version: number;
}

/**
 * The columns of a `PersonRecord`, on `persons` aliased `p`: the one list every reader of
 * persons selects, so a column added to the record is read everywhere.
 */
export const PERSON_RECORD_COLUMNS = 'p.id, p.uuid, p.team_id, p.properties, p.is_identified, p.created_at, p.version';

/** The same columns with the properties as their stored JSON text, for `parsePropertiesJson`. */
export const PERSON_RECORD_TEXT_COLUMNS = PERSON_RECORD_COLUMNS.replace('p.properties', 'p.properties::text AS properties');
