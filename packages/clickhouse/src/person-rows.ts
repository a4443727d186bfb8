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

export interface DistinctIdRowOut {
  team_id: number;
  distinct_id: string;
  person_id: string;
  is_deleted: number;
  version: number;
}

export const DISTINCT_ID_COLUMNS = ['team_id', 'distinct_id', 'person_id', 'is_deleted', 'version'] as const satisfies readonly (keyof DistinctIdRowOut)[];
