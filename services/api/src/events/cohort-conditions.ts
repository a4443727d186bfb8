import { and, inList, sql, Sql } from '@tributary/clickhouse';
import type { Pool } from '@tributary/postgres';
import { propertyCondition, type PropertyFilter } from '@tributary/query-language';

interface CohortRow {
  id: number;
  is_static: boolean;
  filters: { properties?: FilterGroup };
}

interface FilterGroup {
  type?: 'AND' | 'OR';
  values?: (FilterGroup | PropertyFilter)[];
}

const isGroup = (value: FilterGroup | PropertyFilter): value is FilterGroup => 'values' in value && !('key' in value);

/** A dynamic cohort's nested AND/OR groups of person-property filters, on the ClickHouse person copy. */
function groupCondition(group: FilterGroup, now: Date): Sql {
  const parts = (group.values ?? []).map((value) => (isGroup(value) ? groupCondition(value, now) : propertyCondition(sql`properties`, value, now)));
  if (parts.length === 0) return sql`1`;
  return group.type === 'OR' ? Sql.trusted(`(${parts.map((p) => `(${p.text})`).join(' OR ')})`) : and(parts);
}

/**
 * Conditions on an event's distinct id for cohort filters: a static cohort's members come from
 * Postgres; a dynamic cohort's from its person-property filters over the latest person rows.
 * Both go through distinct ids, so events sent before a merge still count for the person.
 */
export async function cohortConditions(pool: Pool, teamId: number, ids: readonly number[], now: Date): Promise<Map<number, Sql>> {
  const conditions = new Map<number, Sql>();
  if (ids.length === 0) return conditions;
  const { rows } = await pool.query<CohortRow>('SELECT id, is_static, filters FROM cohorts WHERE team_id = $1 AND id = ANY($2::int[]) AND NOT deleted', [teamId, ids]);
  for (const cohort of rows) {
    if (cohort.is_static) {
      const members = await pool.query<{ distinct_id: string }>(
        `SELECT d.distinct_id FROM cohort_people c JOIN person_distinct_ids d ON d.person_id = c.person_id WHERE c.cohort_id = $1`,
        [cohort.id],
      );
      conditions.set(cohort.id, inList(sql`distinct_id`, members.rows.map((r) => r.distinct_id)));
    } else {
      const persons = sql`SELECT id FROM person FINAL WHERE team_id = ${teamId} AND is_deleted = 0 AND ${groupCondition(cohort.filters.properties ?? {}, now)}`;
      conditions.set(
        cohort.id,
        sql`distinct_id IN (SELECT distinct_id FROM person_distinct_id FINAL WHERE team_id = ${teamId} AND is_deleted = 0 AND person_id IN (${persons}))`,
      );
    }
  }
  return conditions;
}
