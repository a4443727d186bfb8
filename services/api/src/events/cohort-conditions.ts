import { and, inList, sql, Sql } from '@tributary/clickhouse';
import type { CohortFilterGroup, PropertyFilter } from '@tributary/flags';
import { clickhousePropertyCondition } from '@tributary/property-filters/clickhouse';
import type { CohortStore } from '../cohorts/cohort-store.js';

const isGroup = (value: CohortFilterGroup | PropertyFilter): value is CohortFilterGroup => !('key' in value);

function filterCondition(filter: PropertyFilter, now: Date): Sql {
  const condition = clickhousePropertyCondition(sql`properties`, filter, now);
  return filter.negation ? sql`NOT (${condition})` : condition;
}

/** A dynamic cohort's nested AND/OR groups of person-property filters, on the ClickHouse person copy, as flags read them. */
function groupCondition(group: CohortFilterGroup, now: Date): Sql {
  const parts = (group.values ?? []).map((value) => (isGroup(value) ? groupCondition(value, now) : filterCondition(value, now)));
  if (parts.length === 0) return sql`1`;
  return group.type === 'OR' ? Sql.trusted(`(${parts.map((p) => `(${p.text})`).join(' OR ')})`) : and(parts);
}

/**
 * Conditions on an event's distinct id for cohort filters: a static cohort's members come from
 * Postgres; a dynamic cohort's from its person-property filters over the latest person rows.
 * Both go through distinct ids, so events sent before a merge still count for the person.
 */
export async function cohortConditions(cohorts: CohortStore, teamId: number, ids: readonly number[], now: Date): Promise<Map<number, Sql>> {
  const conditions = new Map<number, Sql>();
  if (ids.length === 0) return conditions;
  for (const cohort of await cohorts.definitions(teamId, ids)) {
    if (cohort.is_static) {
      conditions.set(cohort.id, inList(sql`distinct_id`, await cohorts.memberDistinctIds(cohort.id)));
    } else {
      const group = (cohort.filters as { properties?: CohortFilterGroup }).properties ?? {};
      const persons = sql`SELECT id FROM person FINAL WHERE team_id = ${teamId} AND is_deleted = 0 AND ${groupCondition(group, now)}`;
      conditions.set(
        cohort.id,
        sql`distinct_id IN (SELECT distinct_id FROM person_distinct_id FINAL WHERE team_id = ${teamId} AND is_deleted = 0 AND person_id IN (${persons}))`,
      );
    }
  }
  return conditions;
}
