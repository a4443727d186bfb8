import type { Pool } from '@tributary/postgres';

/** A live flag's key, or null: posthog-js skips a check whose key is null. */
const flagKey = (column: string) => `(SELECT f.key FROM feature_flags f WHERE f.id = ${column} AND NOT f.deleted)`;

/**
 * The surveys and early access features posthog-js asks for by project token, read from the
 * tables the api writes, in the shapes PostHog's public endpoints answer.
 */
export class ProductLists {
  constructor(private readonly pool: Pool) {}

  /**
   * Every survey not archived, as PostHog's SurveyAPISerializer: posthog-js decides which run
   * (a start date and no end date) and asks decide for their flags. The description is left out,
   * as PostHog leaves it out, since teams keep internal notes there.
   */
  async surveys(teamId: number): Promise<Record<string, unknown>[]> {
    const { rows } = await this.pool.query(
      `SELECT s.id, s.name, s.type, ${flagKey('s.linked_flag_id')} AS linked_flag_key, ${flagKey('s.targeting_flag_id')} AS targeting_flag_key,
         ${flagKey('s.internal_targeting_flag_id')} AS internal_targeting_flag_key, s.questions, s.conditions, s.appearance, s.start_date, s.end_date,
         NULL AS current_iteration, NULL AS current_iteration_start_date, s.schedule, s.enable_partial_responses
       FROM surveys s WHERE s.team_id = $1 AND NOT s.archived ORDER BY s.created_at, s.id`,
      [teamId],
    );
    return rows;
  }

  /** Whether posthog-js should load surveys at all: some survey is running. */
  async hasRunningSurvey(teamId: number): Promise<boolean> {
    const { rows } = await this.pool.query<{ running: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM surveys WHERE team_id = $1 AND NOT archived AND start_date IS NOT NULL AND end_date IS NULL) AS running',
      [teamId],
    );
    return rows[0]!.running;
  }

  /** The features in these stages, as PostHog's MinimalEarlyAccessFeatureSerializer (posthog-js's FeaturePreview). */
  async earlyAccessFeatures(teamId: number, stages: string[]): Promise<Record<string, unknown>[]> {
    const { rows } = await this.pool.query(
      `SELECT e.id, e.name, e.description, e.stage, e.documentation_url AS "documentationUrl", ${flagKey('e.feature_flag_id')} AS "flagKey"
       FROM early_access_features e WHERE e.team_id = $1 AND e.stage = ANY($2::text[]) ORDER BY e.created_at, e.id`,
      [teamId, stages],
    );
    return rows;
  }
}
