import { Sql, bucketedAggregation, serverOf, type ClickHouse } from '@tributary/clickhouse';
import type { Config } from '@tributary/config';
import { printQuery, type SelectLike } from '@tributary/hogql';
import type { Calculation } from './cohort-calculation-store.js';

/**
 * The HogQL statement whose first column lists the person ids (uuids) of the calculation's
 * cohort, with `now` the time "in the last N days" counts back from (see cohortStatement).
 */
export type CohortMembersStatement = (calculation: Calculation, now: Date) => Promise<SelectLike>;

export type CalculationLimits = Pick<Config, 'cohortCalculationMaxExecutionTimeS' | 'queryMaxMemoryBytes' | 'queryMaxThreads'>;

/**
 * ClickHouse settings of a members query: `readonly` 2 refuses a write whatever the statement, and the time and memory caps
 * (and threads, as the query endpoint's) keep one project's heaviest cohort from costing the
 * installation more than a bounded share.
 */
export function calculationSettings(limits: CalculationLimits): Record<string, number> {
  return {
    readonly: 2,
    max_execution_time: limits.cohortCalculationMaxExecutionTimeS,
    max_memory_usage: limits.queryMaxMemoryBytes,
    ...(limits.queryMaxThreads > 0 && { max_threads: limits.queryMaxThreads }),
    ...bucketedAggregation(limits.queryMaxMemoryBytes),
  };
}

/** A cohort lists all its members: no LIMIT the printer would otherwise add may cut it short. */
const ALL_ROWS = Number.MAX_SAFE_INTEGER - 1;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The first field of a TabSeparatedRaw line: the person id. */
function personIdOf(line: Buffer): string {
  const end = line.indexOf(9);
  return line.toString('latin1', 0, end === -1 ? line.length - 1 : end);
}

/**
 * Reads a calculation's members from ClickHouse as they arrive: the cohort's statement printed
 * by the one printer under the cohort's project guard, streamed as lines, so a cohort of
 * millions is never held whole. Ids that are not uuids (no person) are left out.
 */
export function cohortMembersReader(deps: { clickhouse: ClickHouse; statement: CohortMembersStatement; limits: CalculationLimits; clock?: () => Date }) {
  const clock = deps.clock ?? (() => new Date());
  return async function* members(calculation: Calculation): AsyncIterable<string[]> {
    const server = await serverOf(deps.clickhouse);
    const statement = await deps.statement(calculation, clock());
    const printed = printQuery(statement, { teamId: calculation.teamId, server, defaultLimit: ALL_ROWS, maxLimit: ALL_ROWS });
    for await (const lines of deps.clickhouse.streamLines(Sql.trusted(printed.clickhouse), { settings: calculationSettings(deps.limits) })) {
      yield lines.map(personIdOf).filter((id) => UUID.test(id));
    }
  };
}
