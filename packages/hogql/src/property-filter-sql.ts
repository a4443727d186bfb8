import { and, sql, type Sql } from '@tributary/clickhouse';
import { PROPERTY_FILTER_TYPES, PropertyFilterError, isCohortId, propertyFilterProblem, type StoredPropertyFilter } from '@tributary/property-filters';
import { clickhousePropertyCondition } from '@tributary/property-filters/clickhouse';

export interface FilterContext {
  teamId: number;
  now: Date;
  /** Cohort id -> condition on the event's person, resolved by the caller (static or dynamic). */
  cohorts: ReadonlyMap<number, Sql>;
}

const GROUP_COLUMNS = [sql`group_0`, sql`group_1`, sql`group_2`, sql`group_3`, sql`group_4`];

/** Compiles `properties=[...]` on the events table; all filters must hold. Event properties are the default. */
export function compilePropertyFilters(filters: readonly StoredPropertyFilter[], context: FilterContext): Sql {
  return and(
    filters.map((filter, i) => {
      const problem = propertyFilterProblem(filter, `properties[${i}]`, { types: PROPERTY_FILTER_TYPES, now: context.now });
      if (problem) throw new PropertyFilterError(`property filter on ${String(filter.key)}: ${problem.detail}`);
      switch (filter.type ?? 'event') {
        case 'event':
          return clickhousePropertyCondition(sql`properties`, filter, context.now);
        case 'person':
          return clickhousePropertyCondition(sql`person_properties`, filter, context.now);
        case 'group': {
          const index = filter.group_type_index;
          if (index === undefined) throw new PropertyFilterError(`group property filter on ${filter.key} needs group_type_index 0 to 4`);
          return sql`${GROUP_COLUMNS[index]!} IN (SELECT group_key FROM groups FINAL WHERE team_id = ${context.teamId} AND group_type_index = ${index} AND ${clickhousePropertyCondition(sql`group_properties`, filter, context.now)})`;
        }
        default: {
          const condition = context.cohorts.get(Number(filter.value));
          if (!condition) throw new PropertyFilterError(`cohort ${String(filter.value)} does not exist`);
          return filter.operator === 'not_in' ? sql`NOT (${condition})` : condition;
        }
      }
    }),
  );
}

/**
 * Cohort ids a filter list refers to, so the caller can resolve them first. Only well-formed ids:
 * the caller looks them up in Postgres, and a filter with any other value is refused when compiled.
 */
export function cohortIds(filters: readonly StoredPropertyFilter[]): number[] {
  return filters.filter((f) => f.type === 'cohort' && isCohortId(f.value)).map((f) => Number(f.value));
}
