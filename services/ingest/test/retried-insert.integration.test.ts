import { randomUUID } from 'node:crypto';
import { Sql, createClickHouse, sql, topologyOf } from '@tributary/clickhouse';
import { testConfig } from '@tributary/test-support';

/**
 * An insert ingest retries (ClickHouse timed out after taking it, say) writes every event again,
 * stamped a little later. The copies must fold into one event in both topologies: on a cluster,
 * only if every copy of an event lands on the shard that holds the first, since ReplacingMergeTree
 * folds rows within one table.
 */
const config = testConfig();
const clickhouse = createClickHouse(config);
const topology = topologyOf(config);

afterAll(() => clickhouse.close());

const COLUMNS = ['uuid', 'event', 'properties', 'timestamp', 'team_id', 'distinct_id', 'inserted_at'] as const;
type Row = Record<(typeof COLUMNS)[number], string | number>;

async function count(from: string, teamId: number): Promise<number> {
  const [row] = await clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM ${Sql.trusted(from)} FINAL WHERE team_id = ${teamId}`);
  return Number(row?.n ?? 0);
}

describe('an insert of events retried', () => {
  it('leaves each event once, its copies folded on the one shard that holds it', async () => {
    const teamId = 900_000_000 + Math.floor(Math.random() * 99_999_999);
    const events = Array.from({ length: 40 }, (_, i) => ({ uuid: randomUUID(), distinct_id: `retried-${i}` }));
    const rows = (insertedAt: string): Row[] =>
      events.map((e) => ({ ...e, event: 'retried', properties: '{}', timestamp: '2026-01-01 00:00:00', team_id: teamId, inserted_at: insertedAt }));
    await clickhouse.insert('events', COLUMNS, rows('2026-01-01 00:00:01'));
    await clickhouse.insert('events', COLUMNS, rows('2026-01-01 00:00:02'));

    expect(await count('events', teamId)).toBe(40);
    if (topology.cluster === null) return;
    // Each shard folded what it holds: had a copy gone to another shard than its event's, the
    // shards' own counts would add up to more than the events.
    const shards = await clickhouse.query<{ port: number }>(
      sql`SELECT port FROM system.clusters WHERE cluster = ${topology.cluster} AND replica_num = 1 ORDER BY shard_num`,
    );
    expect(shards.length).toBeGreaterThan(1);
    let total = 0;
    // Each server is read as the configured user: no ClickHouse user connects without a password.
    const shard = (port: number) => sql`remote(${`127.0.0.1:${port}`}, ${Sql.trusted(topology.database)}, sharded_events, ${config.clickhouseUser}, ${config.clickhousePassword})`;
    for (const { port } of shards) total += await count(shard(Number(port)).text, teamId);
    expect(total).toBe(40);
  });
});
