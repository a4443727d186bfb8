import { sql } from '@tributary/clickhouse';
import { queryError, type Expr } from '@tributary/hogql';
import type { StoredPropertyFilter } from '@tributary/property-filters';
import { clickhousePropertyCondition } from '@tributary/property-filters/clickhouse';

/** Event and person property filters with the flag matcher's semantics, over the row's own columns (person properties as at the event). */
export function propertyConditions(filters: readonly StoredPropertyFilter[], now: Date, kind = 'TrendsQuery'): Expr[] {
  return filters.map((filter) => {
    const type = filter.type ?? 'event';
    if (type !== 'event' && type !== 'person') throw queryError(`properties of type ${type} are not supported in a ${kind} yet`);
    const column = type === 'event' ? sql`\`events\`.\`properties\`` : sql`\`events\`.\`person_properties\``;
    return { node: 'TrustedSql', sql: clickhousePropertyCondition(column, filter, now).text };
  });
}
