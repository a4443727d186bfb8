import { createHash } from 'node:crypto';
import type { ResolvedItem, Source } from './resolved-tree.js';
import { quoteIdentifier as q } from './sql-names.js';

/**
 * Where the SQL takes a roundabout form because, on a cluster, 18.16 rewrites a query over the
 * Distributed events table before sending it to each shard. One server reads both forms alike.
 * The rules for 18.16 on one server are in `clickhouse-18-16.ts`.
 */

/**
 * The events side of the lazy person join, unqualified: 18.16 sends a query over the Distributed
 * events table to each shard without the table's alias, but leaves the ON clause as written, so
 * `alias.distinct_id` there is unknown on the shard. Unqualified, the left table's column is the
 * one read on one server and on a shard alike.
 */
export const LAZY_JOIN_KEY = 'distinct_id';

/**
 * Whether a select's column alias would be read as the lazy join's unqualified key (18.16 reads an
 * alias before a column): such an alias is printed apart, and a select around this one gives the
 * name back, at the top level too.
 */
export const aliasesLazyJoinKey = (items: ResolvedItem[], sources: Source[]): boolean =>
  items.some((i) => !i.implicit && i.name === LAZY_JOIN_KEY) && sources.some((s) => s.table === 'events' && !s.wrapped);

/**
 * A subquery used as a value, named after its own text: 18.16 sends the shards its result as a
 * literal, and names an unnamed one differently on the initiator, which then cannot find the
 * shards' columns (an expression over it grouped by, say). The same text gets the same name,
 * which ClickHouse allows where an expression repeats.
 */
export function scalarSubquery(select: string): string {
  return `((${select}) AS ${q(`__scalar_${createHash('sha1').update(select).digest('hex').slice(0, 12)}`)})`;
}
