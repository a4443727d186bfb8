import type { Pool } from '@tributary/postgres';
import { minimalFlagJson, type MinimalFlag } from '../surveys/minimal-flag.js';
import type { ExperimentMetric } from './experiment-metrics.js';

/** PostHog's `parameters`: the flag's variants and what the test should detect; other keys are kept as given. */
export interface ExperimentParameters {
  feature_flag_variants?: { key: string; name?: string; rollout_percentage: number }[];
  minimum_detectable_effect?: number;
  [key: string]: unknown;
}

/** PostHog's `exposure_criteria`, kept as given: its ExperimentTrendsQuery and ExperimentFunnelsQuery read each event's own variant and do not use it. */
export interface ExposureCriteria {
  filterTestAccounts?: boolean;
  multiple_variant_handling?: 'exclude' | 'first_seen';
}

export interface ExperimentFields {
  name: string;
  description: string;
  parameters: ExperimentParameters;
  metrics: ExperimentMetric[];
  metrics_secondary: ExperimentMetric[];
  exposure_criteria: ExposureCriteria | null;
  start_date: string | null;
  end_date: string | null;
  archived: boolean;
}

export interface ExperimentRow extends Omit<ExperimentFields, 'start_date' | 'end_date'> {
  id: number;
  team_id: number;
  start_date: Date | null;
  end_date: Date | null;
  feature_flag_id: number;
  feature_flag: MinimalFlag | null;
  created_by: number | null;
  created_at: Date;
  updated_at: Date;
}

const SELECT = `SELECT x.id, x.team_id, x.name, x.description, x.feature_flag_id, x.parameters, x.metrics, x.metrics_secondary, x.exposure_criteria,
    x.start_date, x.end_date, x.archived, x.created_by, x.created_at, x.updated_at, ${minimalFlagJson('x.feature_flag_id')} AS feature_flag
  FROM experiments x`;

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));

/** A project's experiments in Postgres. Deleting one is a soft delete, as PostHog's. */
export class ExperimentStore {
  constructor(private readonly pool: Pool) {}

  async list(teamId: number, limit: number, offset: number): Promise<{ count: number; results: ExperimentRow[] }> {
    const [{ rows }, count] = await Promise.all([
      this.pool.query<ExperimentRow>(`${SELECT} WHERE x.team_id = $1 AND NOT x.deleted ORDER BY x.created_at DESC, x.id DESC LIMIT $2 OFFSET $3`, [teamId, limit, offset]),
      this.pool.query<{ count: number }>('SELECT count(*)::int AS count FROM experiments WHERE team_id = $1 AND NOT deleted', [teamId]),
    ]);
    return { count: count.rows[0]!.count, results: rows };
  }

  async get(teamId: number, id: number): Promise<ExperimentRow | null> {
    const { rows } = await this.pool.query<ExperimentRow>(`${SELECT} WHERE x.team_id = $1 AND x.id = $2 AND NOT x.deleted`, [teamId, id]);
    return rows[0] ?? null;
  }

  async create(teamId: number, fields: ExperimentFields, flagId: number, createdBy: number): Promise<ExperimentRow> {
    const { rows } = await this.pool.query<{ id: number }>(
      `INSERT INTO experiments (team_id, name, description, feature_flag_id, parameters, metrics, metrics_secondary, exposure_criteria, start_date, end_date, archived, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`,
      [teamId, fields.name, fields.description, flagId, json(fields.parameters), json(fields.metrics), json(fields.metrics_secondary), json(fields.exposure_criteria), fields.start_date, fields.end_date, fields.archived, createdBy],
    );
    return (await this.get(teamId, rows[0]!.id))!;
  }

  /** Sets the fields given; a null date clears it, an absent one keeps it. */
  async update(teamId: number, id: number, changes: Partial<ExperimentFields>): Promise<ExperimentRow | null> {
    const has = (name: keyof ExperimentFields) => Object.hasOwn(changes, name);
    const result = await this.pool.query(
      `UPDATE experiments SET name = COALESCE($3, name), description = COALESCE($4, description), parameters = COALESCE($5, parameters),
         metrics = COALESCE($6, metrics), metrics_secondary = COALESCE($7, metrics_secondary),
         exposure_criteria = CASE WHEN $8 THEN $9::jsonb ELSE exposure_criteria END,
         start_date = CASE WHEN $10 THEN $11::timestamptz ELSE start_date END, end_date = CASE WHEN $12 THEN $13::timestamptz ELSE end_date END,
         archived = COALESCE($14, archived), updated_at = now()
       WHERE team_id = $1 AND id = $2 AND NOT deleted`,
      [
        teamId, id, changes.name ?? null, changes.description ?? null, json(changes.parameters), json(changes.metrics), json(changes.metrics_secondary),
        has('exposure_criteria'), json(changes.exposure_criteria), has('start_date'), changes.start_date ?? null, has('end_date'), changes.end_date ?? null, changes.archived ?? null,
      ],
    );
    return result.rowCount === 1 ? this.get(teamId, id) : null;
  }

  async softDelete(teamId: number, id: number): Promise<boolean> {
    const result = await this.pool.query('UPDATE experiments SET deleted = true, updated_at = now() WHERE team_id = $1 AND id = $2 AND NOT deleted', [teamId, id]);
    return result.rowCount === 1;
  }
}
