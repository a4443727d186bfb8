import { Sql, ident, sql } from './sql.js';
import type { ClickHouse } from './client.js';
import { dataTableName, type Topology } from './topology.js';

/** Where the mutations show: this server's table, or one replica of every shard's in a cluster. */
function mutationsTable(topology: Topology): Sql {
  return topology.cluster === null ? sql`system.mutations` : Sql.trusted(`cluster(${ident(topology.cluster).text}, system, mutations)`);
}

/** Returns once no mutation of `events`'s rows (on any shard) is left to do; throws after `timeoutMs`. */
export async function waitForEventMutations(clickhouse: ClickHouse, topology: Topology, timeoutMs: number, pollMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await clickhouse.query<{ pending: string | number }>(
      sql`SELECT count() AS pending FROM ${mutationsTable(topology)} WHERE database = ${topology.database} AND table = ${dataTableName(topology, 'events')} AND is_done = 0`,
    );
    if (Number(row?.pending ?? 0) === 0) return;
    if (Date.now() > deadline) throw new Error(`ClickHouse mutations on events did not finish within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
