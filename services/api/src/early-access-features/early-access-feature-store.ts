import type { Pool } from '@tributary/postgres';
import { minimalFlagJson, type MinimalFlag } from '../surveys/minimal-flag.js';
import { UuidRowStore } from '../surveys/uuid-row-store.js';

export const STAGES = ['draft', 'concept', 'alpha', 'beta', 'general-availability', 'archived'] as const;
export type Stage = (typeof STAGES)[number];

export interface EarlyAccessFeatureFields {
  name: string;
  description: string;
  stage: Stage;
  documentation_url: string;
}

export interface EarlyAccessFeatureRow extends EarlyAccessFeatureFields {
  id: string;
  team_id: number;
  created_at: Date;
  feature_flag: MinimalFlag | null;
}

const SELECT = `SELECT e.id, e.team_id, e.name, e.description, e.stage, e.documentation_url, e.created_at, ${minimalFlagJson('e.feature_flag_id')} AS feature_flag
  FROM early_access_features e`;

/** A project's early access features in Postgres; decide lists them for posthog-js (see ProductLists). */
export class EarlyAccessFeatureStore extends UuidRowStore<EarlyAccessFeatureRow> {
  constructor(pool: Pool) {
    super(pool, { name: 'early_access_features', alias: 'e', select: SELECT });
  }

  /** Whether a feature already shows through this flag: a flag belongs to one feature at most. */
  async flagTaken(flagId: number): Promise<boolean> {
    const { rowCount } = await this.pool.query('SELECT 1 FROM early_access_features WHERE feature_flag_id = $1', [flagId]);
    return rowCount === 1;
  }

  async create(teamId: number, id: string, fields: EarlyAccessFeatureFields, flagId: number): Promise<EarlyAccessFeatureRow> {
    await this.pool.query(
      'INSERT INTO early_access_features (id, team_id, name, description, stage, documentation_url, feature_flag_id) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [id, teamId, fields.name, fields.description, fields.stage, fields.documentation_url, flagId],
    );
    return (await this.get(teamId, id))!;
  }

  async update(teamId: number, id: string, changes: Partial<EarlyAccessFeatureFields>): Promise<EarlyAccessFeatureRow | null> {
    const result = await this.pool.query(
      `UPDATE early_access_features SET name = COALESCE($3, name), description = COALESCE($4, description), stage = COALESCE($5, stage),
         documentation_url = COALESCE($6, documentation_url) WHERE team_id = $1 AND id = $2`,
      [teamId, id, changes.name ?? null, changes.description ?? null, changes.stage ?? null, changes.documentation_url ?? null],
    );
    return result.rowCount === 1 ? this.get(teamId, id) : null;
  }
}
