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
