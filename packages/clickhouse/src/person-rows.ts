import { propertiesJson, type PersonRecord } from '@tributary/persons';
import { formatDateTime } from './sql.js';

/**
 * The versioned copies of persons and distinct ids in ClickHouse. Ingest writes them as persons
 * change; the management API writes them when it deletes or splits a person.
 */
export interface PersonRowOut {
  id: string;
  created_at: string;
  team_id: number;
  properties: string;
  is_identified: number;
  is_deleted: number;
  version: number;
}

export const PERSON_COLUMNS = ['id', 'created_at', 'team_id', 'properties', 'is_identified', 'is_deleted', 'version'] as const satisfies readonly (keyof PersonRowOut)[];

/**
 * A person's ClickHouse row. A deleted person's row is a tombstone: it keeps nothing of the
 * person (no properties, not identified), as PostHog writes it, so no reader of the latest
 * version can tell anything about who was deleted.
 */
export function personRow(person: Pick<PersonRecord, 'uuid' | 'created_at' | 'team_id' | 'properties' | 'is_identified' | 'version'>, { deleted }: { deleted: boolean }): PersonRowOut {
  return {
    id: person.uuid,
    created_at: formatDateTime(person.created_at),
    team_id: person.team_id,
    properties: deleted ? '{}' : propertiesJson(person.properties),
    is_identified: !deleted && person.is_identified ? 1 : 0,
    is_deleted: deleted ? 1 : 0,
    version: person.version,
  };
}

export interface DistinctIdRowOut {
  team_id: number;
  distinct_id: string;
  person_id: string;
  is_deleted: number;
  version: number;
}

export const DISTINCT_ID_COLUMNS = ['team_id', 'distinct_id', 'person_id', 'is_deleted', 'version'] as const satisfies readonly (keyof DistinctIdRowOut)[];

/** A distinct id's ClickHouse row: which person it points to, at which version. */
export function distinctIdRow(teamId: number, change: { distinctId: string; personUuid: string; version: number }, { deleted }: { deleted: boolean }): DistinctIdRowOut {
  return { team_id: teamId, distinct_id: change.distinctId, person_id: change.personUuid, is_deleted: deleted ? 1 : 0, version: change.version };
}
