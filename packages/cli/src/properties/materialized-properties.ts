import {
  PROPERTIES_COLUMNS,
  materializeProperty,
  readMaterializedColumns,
  serverOf,
  type ClickHouse,
  type MaterializedColumns,
  type PropertiesColumn,
  type Topology,
} from '@tributary/clickhouse';
import { serverHas } from '@tributary/hogql';
import { propertyReadCounts, type PropertyReadCount, type Redis } from '@tributary/redis';

/**
 * The operator's side of materialized properties (`tributary properties:*`): which properties
 * queries read most, which have columns, and giving them columns. Only these commands add
 * columns; a tenant's queries only read the ones that exist.
 */

export interface PropertiesDeps {
  clickhouse: ClickHouse;
  redis: Pick<Redis, 'hgetall'>;
  topology: Topology;
  maxColumns: number;
  mutationTimeoutMs: number;
  /** The hash the query endpoint counts reads in (tests use their own). */
  readsKey?: string;
}

export interface PropertyListing {
  column: PropertiesColumn;
  key: string;
  reads: number;
  /** Its column, when it has one. */
  materialized: string | null;
}

const isPropertiesColumn = (column: string): column is PropertiesColumn => (PROPERTIES_COLUMNS as readonly string[]).includes(column);

/** Every materialized property, and the `limit` most read ones, most read first. */
export function propertyListing(counts: readonly PropertyReadCount[], existing: MaterializedColumns, limit: number): PropertyListing[] {
  const listed = new Map<string, PropertyListing>();
  const add = (column: PropertiesColumn, key: string, reads: number) => listed.set(JSON.stringify([column, key]), { column, key, reads, materialized: existing[column].get(key) ?? null });
  for (const column of PROPERTIES_COLUMNS) for (const key of existing[column].keys()) add(column, key, 0);
  let shown = 0;
  for (const { column, key, reads } of counts) {
    if (!isPropertiesColumn(column)) continue;
    const name = JSON.stringify([column, key]);
    if (listed.has(name)) listed.get(name)!.reads = reads;
    else if (shown++ < limit) add(column, key, reads);
  }
  return [...listed.values()].sort((a, b) => b.reads - a.reads || a.column.localeCompare(b.column) || a.key.localeCompare(b.key));
}

export interface AutoOptions {
  topN: number;
  minReads: number;
  maxColumns: number;
}

/**
 * The properties auto-materialization gives columns: the `topN` most read with at least
 * `minReads` reads that have none yet, within the room `maxColumns` leaves.
 */
export function propertiesToMaterialize(counts: readonly PropertyReadCount[], existing: MaterializedColumns, options: AutoOptions): { column: PropertiesColumn; key: string }[] {
  const room = Math.max(0, options.maxColumns - existing.properties.size - existing.person_properties.size);
  return counts
    .filter((c): c is PropertyReadCount & { column: PropertiesColumn } => isPropertiesColumn(c.column) && c.reads >= options.minReads && !existing[c.column].has(c.key))
    .slice(0, Math.min(options.topN, room))
    .map(({ column, key }) => ({ column, key }));
}

async function fillOf(clickhouse: ClickHouse): Promise<'materialize' | 'update'> {
  return serverHas(await serverOf(clickhouse), 'materializeColumn') ? 'materialize' : 'update';
}

export async function materializeProperties(deps: PropertiesDeps, properties: readonly { column: PropertiesColumn; key: string }[]): Promise<{ column: PropertiesColumn; key: string; name: string; added: boolean }[]> {
  const fill = await fillOf(deps.clickhouse);
  const done = [];
  for (const { column, key } of properties) {
    const result = await materializeProperty(deps.clickhouse, column, key, { topology: deps.topology, fill, maxColumns: deps.maxColumns, mutationTimeoutMs: deps.mutationTimeoutMs });
    done.push({ column, key, ...result });
  }
  return done;
}

export async function listProperties(deps: PropertiesDeps, limit: number): Promise<PropertyListing[]> {
  return propertyListing(await propertyReadCounts(deps.redis, deps.readsKey), await readMaterializedColumns(deps.clickhouse), limit);
}

export async function autoMaterialize(deps: PropertiesDeps, options: Omit<AutoOptions, 'maxColumns'>) {
  const picked = propertiesToMaterialize(await propertyReadCounts(deps.redis, deps.readsKey), await readMaterializedColumns(deps.clickhouse), { ...options, maxColumns: deps.maxColumns });
  return materializeProperties(deps, picked);
}
