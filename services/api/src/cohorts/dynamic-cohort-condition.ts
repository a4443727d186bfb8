import type { CohortFilterGroup, PropertyFilter } from '@tributary/flags';
import { postgresPropertyCondition, type PgCondition } from '@tributary/property-filters/postgres';

const isGroup = (value: CohortFilterGroup | PropertyFilter): value is CohortFilterGroup => !('key' in value);

/**
 * Who a dynamic cohort's nested AND/OR groups of person-property filters take, as a Postgres
 * condition over the jsonb `column`, with the flag engine's semantics (`isCohortMember`): an empty
 * AND holds, an empty OR does not, and `negation` inverts a filter. A condition SQL reads as
 * unknown counts as not holding, as the matcher's false does.
 */
export function dynamicCohortCondition(column: string, group: CohortFilterGroup, firstParam: number, now: Date): PgCondition {
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${firstParam + params.length - 1}`;
  };
  const groupText = (g: CohortFilterGroup): string => {
    const parts = (g.values ?? []).map((value) => {
      if (isGroup(value)) return groupText(value);
      const holds = `COALESCE(${postgresPropertyCondition(column, value, param, now)}, false)`;
      return value.negation ? `(NOT ${holds})` : holds;
    });
    if (parts.length === 0) return g.type === 'OR' ? 'false' : 'true';
    return `(${parts.join(g.type === 'OR' ? ' OR ' : ' AND ')})`;
  };
  return { text: groupText(group), params };
}
