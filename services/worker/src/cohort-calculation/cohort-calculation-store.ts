import type { CalculationState, StoredCohort } from '@tributary/flags';
import type { ActionDefinition } from '@tributary/hogql';
import type { Pool } from '@tributary/postgres';

/** A calculation under way: the cohort, its project's cohorts (which it may nest), and the version it writes. */
export interface Calculation {
  cohortId: number;
  teamId: number;
  cohorts: StoredCohort[];
  version: number;
  /** Postgres's time when it began: what `last_calculation` says once it is done. */
  startedAt: Date;
}

/** Rows one statement deletes at most, so dropping a huge old version never outlasts the statement timeout. */
const DELETE_BATCH = 10_000;

/**
 * Behavioural cohorts' calculated members in Postgres (`cohort_calculated_people`, migration
 * 0019), written as PostHog writes cohortpeople: under a new version, made current by one
 * update of the cohort's `version`, the old versions deleted after. Every statement names the
 * cohort and, where persons are read, its project.
 */
export class CohortCalculationStore {
  constructor(private readonly pool: Pool) {}

  /**
   * Every live dynamic cohort of the projects with a behavioural cohort: the scheduler classifies
   * each project's cohorts itself, since a cohort of person properties matters when another nests it.
   */
  async candidates(): Promise<CalculationState[]> {
    const { rows } = await this.pool.query<CalculationState>(
      `SELECT id, team_id, is_static, filters, version, last_calculation, updated_at, last_error_at FROM cohorts
        WHERE NOT deleted AND NOT is_static AND team_id IN (
          SELECT team_id FROM cohorts WHERE NOT deleted AND NOT is_static AND jsonb_path_exists(filters, 'strict $.**.type ? (@ == "behavioral")'))`,
    );
    return rows;
  }

  /** The project's live cohorts, as the cohort's statement may nest them. */
  async cohortsOf(teamId: number): Promise<StoredCohort[]> {
    const { rows } = await this.pool.query<StoredCohort>('SELECT id, is_static, filters FROM cohorts WHERE team_id = $1 AND NOT deleted', [teamId]);
    return rows;
  }

  /** Every distinct id of a static cohort's members, as the statement of a cohort nesting it lists them. */
  async memberDistinctIds(teamId: number, cohortId: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ distinct_id: string }>(
      `SELECT d.distinct_id FROM cohort_people c JOIN cohorts k ON k.id = c.cohort_id AND k.team_id = $1
         JOIN person_distinct_ids d ON d.person_id = c.person_id AND d.team_id = $1
        WHERE c.cohort_id = $2`,
      [teamId, cohortId],
    );
    return rows.map((r) => r.distinct_id);
  }

  /** The project's live actions among `ids`, as behavioural conditions over actions read them. */
  async actions(teamId: number, ids: readonly number[]): Promise<ActionDefinition[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.pool.query<ActionDefinition>('SELECT id, name, steps FROM actions WHERE team_id = $1 AND NOT deleted AND id = ANY($2::int[])', [teamId, ids]);
    return rows;
  }

  /** The live cohort's project, or null. */
  async teamOf(cohortId: number): Promise<number | null> {
    const { rows } = await this.pool.query<{ team_id: number }>('SELECT team_id FROM cohorts WHERE id = $1 AND NOT deleted AND NOT is_static', [cohortId]);
    return rows[0]?.team_id ?? null;
  }

  /** Marks the cohort calculating under the next version, which no earlier calculation used. */
  async begin(cohortId: number, teamId: number, cohorts: StoredCohort[]): Promise<Calculation | null> {
    const { rows } = await this.pool.query<{ version: number; started_at: Date }>(
      `UPDATE cohorts SET pending_version = GREATEST(pending_version, COALESCE(version, 0)) + 1, is_calculating = true
        WHERE id = $1 AND team_id = $2 AND NOT deleted RETURNING pending_version AS version, now() AS started_at`,
      [cohortId, teamId],
    );
    const row = rows[0];
    return row ? { cohortId, teamId, cohorts, version: row.version, startedAt: row.started_at } : null;
  }

  /** Lists the project's persons among `personUuids` under the calculation's version; how many were new to it. */
  async addMembers(calculation: Calculation, personUuids: readonly string[]): Promise<number> {
    const result = await this.pool.query(
      `INSERT INTO cohort_calculated_people (cohort_id, version, person_id)
       SELECT $1, $2, id FROM persons WHERE team_id = $3 AND uuid = ANY($4::uuid[])
       ON CONFLICT DO NOTHING`,
      [calculation.cohortId, calculation.version, calculation.teamId, personUuids],
    );
    return result.rowCount ?? 0;
  }

  /**
   * Makes the calculation's members the ones read, in one statement, unless a later calculation
   * already finished (then its own are dropped); then deletes the versions it replaced.
   */
  async finish(calculation: Calculation, count: number): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE cohorts SET version = $2, is_calculating = pending_version > $2, last_calculation = $3, calculated_count = $4, errors_calculating = 0
        WHERE id = $1 AND (version IS NULL OR version < $2)`,
      [calculation.cohortId, calculation.version, calculation.startedAt, count],
    );
    const current = rowCount === 1;
    await this.deleteVersions(calculation.cohortId, current ? 'version < $2' : 'version = $2', calculation.version);
    return current;
  }

  /** Counts the failure on the cohort (PostHog's `errors_calculating`) and drops what the calculation wrote. */
  async fail(calculation: Calculation): Promise<void> {
    await this.pool.query(
      `UPDATE cohorts SET is_calculating = pending_version > $2, errors_calculating = errors_calculating + 1, last_error_at = now()
        WHERE id = $1`,
      [calculation.cohortId, calculation.version],
    );
    await this.deleteVersions(calculation.cohortId, 'version = $2', calculation.version);
  }

  private async deleteVersions(cohortId: number, which: 'version < $2' | 'version = $2', version: number): Promise<void> {
    for (;;) {
      const { rowCount } = await this.pool.query(
        `DELETE FROM cohort_calculated_people WHERE ctid = ANY(ARRAY(
           SELECT ctid FROM cohort_calculated_people WHERE cohort_id = $1 AND ${which} LIMIT ${DELETE_BATCH}))`,
        [cohortId, version],
      );
      if ((rowCount ?? 0) < DELETE_BATCH) return;
    }
  }
}
