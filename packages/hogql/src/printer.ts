import { expandMatchesAction } from './action-expr.js';
import type { Expr, SelectLike, SelectQuery } from './ast.js';
import { HogQLError } from './errors.js';
import type { MaterializedColumns } from '@tributary/clickhouse';
import { expandInCohort } from './in-cohort.js';
import { boundNewestFirst } from './newest-first.js';
import { ClickHousePrinter, type PropertyRead } from './print-clickhouse.js';
import { scopeOf } from './resolved-tree.js';
import type { PersonsOnEventsMode } from './schema.js';
import { resolveQuery } from './resolver.js';
import { CLICKHOUSE_18_16, type ClickHouseServer } from './server-features.js';

export { quoteIdentifier } from './sql-names.js';

/**
 * HogQL to ClickHouse SQL in two stages: `resolver.ts` resolves names and types and decides where
 * each tenant guard goes, giving a resolved tree (`resolved-tree.ts`); `print-clickhouse.ts`
 * writes that tree as SQL, guard included. The forms ClickHouse 18.16 and a cluster need are in
 * `clickhouse-18-16.ts` and `distributed-table.ts`.
 */

export interface PrintOptions {
  /** The project every table reference is guarded to. */
  teamId: number;
  /** `{name}` placeholders' values, as PostHog's `values`. */
  values?: Record<string, unknown>;
  /** Rows a top-level query without LIMIT returns (one more is asked for, to tell whether there are more). */
  defaultLimit?: number;
  /** Rows no top-level query returns more of, whatever its LIMIT says. */
  maxLimit?: number;
  /**
   * The ClickHouse release the SQL is for (`serverOf` reads it once per client): what only newer
   * releases run is allowed there and refused on older ones, and 18.16's workarounds are printed
   * only for 18.16. Without it, SQL for 18.16, which every later release runs too.
   */
  server?: ClickHouseServer;
  /** The project's actions `matchesAction(...)` may name, by name and by id, each as its condition over events (`actionExpr`). */
  actions?: ReadonlyMap<string | number, Expr>;
  /**
   * The properties `events` has columns of their own for (`materializedColumnsOf`): read there,
   * with the same answer as from the JSON. Without it, every property is read from the JSON.
   */
  materialized?: MaterializedColumns;
  /** The project's cohorts `IN COHORT` may name, by name and by id, each as the statement listing its persons' ids (`cohortPersonIdsQuery`). */
  cohorts?: ReadonlyMap<string | number, SelectQuery>;
  /** Where events' persons come from (PostHog's `personsOnEventsMode`); `DEFAULT_PERSONS_ON_EVENTS_MODE` by default. */
  personsOnEvents?: PersonsOnEventsMode;
}

export interface PrintedQuery {
  /** ClickHouse SQL, every stored table guarded to the project. */
  clickhouse: string;
  /** Column names as PostHog gives them: the alias, or the expression in HogQL. */
  columns: string[];
  /** Set when the query had no LIMIT of its own: rows past this many are the `hasMore` probe. */
  paginatedLimit: number | null;
  limit: number;
  offset: number;
  /** The top-level properties of events' JSON columns the query reads, once each: what picks the properties worth a column. */
  propertyReads: PropertyRead[];
}

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 50_000;

/**
 * Prints a parsed HogQL query as ClickHouse SQL for one project. Every stored table is read only
 * through a `team_id` guard this function adds, in every subquery, join, CTE and union part,
 * so no input can reach another project's rows; everything else is an allow-list.
 */
export function printQuery(written: SelectLike, options: PrintOptions): PrintedQuery {
  const server = options.server ?? CLICKHOUSE_18_16;
  const printer = new ClickHousePrinter(options.teamId, options.values ?? {}, server, options.materialized, options.personsOnEvents);
  const defaultLimit = Math.min(options.defaultLimit ?? DEFAULT_LIMIT, options.maxLimit ?? MAX_LIMIT);
  const maxLimit = options.maxLimit ?? MAX_LIMIT;
  try {
    const query = expandInCohort(expandMatchesAction(written, options.actions ?? new Map()), options.cohorts ?? new Map());
    const top = query.node === 'SelectQuery' ? query : null;
    const ownLimit = top?.limit ? printer.integer(top.limit, 'LIMIT') : null;
    const offset = top?.offset ? printer.integer(top.offset, 'OFFSET') : 0;
    const limit = ownLimit === null ? defaultLimit : Math.min(ownLimit, maxLimit);
    // A query without a LIMIT of its own asks for one row more, to tell whether there are more.
    const fetched = ownLimit === null ? limit + 1 : limit;
    const resolved = resolveQuery(boundNewestFirst(query, offset + fetched), server);
    let body: string;
    let columns: string[];
    if (resolved.node === 'SelectQuery') {
      ({ sql: body, columns } = printer.selectQuery(resolved, true));
    } else {
      body = `SELECT * FROM (${printer.select(resolved, false)})`;
      columns = scopeOf(firstSelect(resolved)).items.map((item) => item.column);
    }
    return { clickhouse: `${body} LIMIT ${offset ? `${offset}, ` : ''}${fetched}`, columns, paginatedLimit: ownLimit === null ? limit : null, limit, offset, propertyReads: printer.propertyReads() };
  } catch (error) {
    if (error instanceof RangeError) throw new HogQLError('The query nests too deeply to print', 'hogql_query_error');
    throw error;
  }
}

function firstSelect(query: SelectLike): SelectQuery {
  return query.node === 'SelectQuery' ? query : firstSelect(query.initial_select_query);
}

