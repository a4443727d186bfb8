import type { ChdbClickHouse } from '@tributary/test-support/chdb';
import { sql } from './sql.js';

/** The migrations, in their single-node form, apply on a current ClickHouse (chdb's in-process 26.x) and give the tables 18.16 has. */
let clickhouse: ChdbClickHouse;
beforeAll(async () => {
  clickhouse = await (await import('@tributary/test-support/chdb')).createChdbClickHouse();
});
afterAll(() => clickhouse.close());

test("every table and column of the migrations, with the stored-at defaults the exports cut windows by", async () => {
  const columns = await clickhouse.query<{ table: string; name: string; default_expression: string }>(
    sql`SELECT table, name, default_expression FROM system.columns WHERE database = currentDatabase() ORDER BY table, position`,
  );
  expect([...new Set(columns.map((c) => c.table))].sort()).toEqual(['events', 'groups', 'ingestion_warnings', 'override_squashes', 'person', 'person_distinct_id', 'squashed_distinct_ids']);
  expect(columns.filter((c) => c.table === 'events').map((c) => c.name)).toEqual(['uuid', 'event', 'properties', 'timestamp', 'timestamp_ms', 'team_id', 'distinct_id', 'elements_chain', 'created_at', 'person_id', 'person_properties', 'person_created_at', 'group_0', 'group_1', 'group_2', 'group_3', 'group_4', 'inserted_at']);
  expect(columns.filter((c) => c.default_expression !== '').map((c) => [c.table, c.name, c.default_expression])).toEqual([
    ['events', 'inserted_at', 'now()'],
    ['person', '_timestamp', 'now()'],
    ['person_distinct_id', '_timestamp', 'now()'],
  ]);
});
