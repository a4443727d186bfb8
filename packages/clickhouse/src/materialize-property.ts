import { Sql } from './sql.js';
import type { ClickHouse } from './client.js';
import { runStatement } from './migrations.js';
import { waitForEventMutations } from './mutations.js';
import { materializedColumnName, materializedExpression, readMaterializedColumns, type PropertiesColumn } from './materialized-columns.js';
import { alteredTable, type Topology } from './topology.js';

export interface MaterializeOptions {
  topology: Topology;
  /**
   * How the parts written before the column are filled: `materialize` with MATERIALIZE COLUMN
   * (ClickHouse 21.10 and later); `update` as PostHog did before it, by making the column a
   * DEFAULT one for an `UPDATE c = c` mutation (18.16 refuses to UPDATE a MATERIALIZED column)
   * and then MATERIALIZED again.
   */
  fill: 'materialize' | 'update';
  /** How many materialized columns `events` may have in all: each one costs every insert a little. */
  maxColumns: number;
  mutationTimeoutMs: number;
  pollMs?: number;
}

export class MaterializedColumnLimitError extends Error {}

/**
 * Gives a property its own column on `events` (on every shard, and on the Distributed table in
 * front of them), filled for every row already stored; re-running it for a property that has its
 * column fills it again, so a run that died half-way is finished by running it again. Only an
 * operator runs this (the CLI): a tenant's queries only read what exists.
 */
export async function materializeProperty(clickhouse: ClickHouse, column: PropertiesColumn, key: string, options: MaterializeOptions): Promise<{ name: string; added: boolean }> {
  const existing = await readMaterializedColumns(clickhouse);
  const name = materializedColumnName(column, key);
  const added = !existing[column].has(key);
  const count = existing.properties.size + existing.person_properties.size;
  if (added && count >= options.maxColumns) {
    throw new MaterializedColumnLimitError(`events has ${count} materialized columns, the most allowed (MATERIALIZED_COLUMNS_MAX): raise it to add ${JSON.stringify(key)}`);
  }
  const expression = materializedExpression(column, key);
  const alter = (definition: string) => runStatement(clickhouse, `ALTER TABLE events ${definition}`, options.topology);
  if (added) await alter(`ADD COLUMN ${name} String MATERIALIZED ${expression}`);

  // A mutation goes to the tables holding the rows: in a cluster, every shard's, named with its database.
  const { topology } = options;
  const events = alteredTable(topology, 'events');
  const mutate = async (command: string) => {
    await clickhouse.command(Sql.trusted(`ALTER TABLE ${events} ${command}`));
    await waitForEventMutations(clickhouse, topology, options.mutationTimeoutMs, options.pollMs ?? 500);
  };
  if (options.fill === 'materialize') {
    await mutate(`MATERIALIZE COLUMN ${name}`);
  } else {
    await alter(`MODIFY COLUMN ${name} String DEFAULT ${expression}`);
    await mutate(`UPDATE ${name} = ${name} WHERE 1`);
    await alter(`MODIFY COLUMN ${name} String MATERIALIZED ${expression}`);
  }
  return { name, added };
}
