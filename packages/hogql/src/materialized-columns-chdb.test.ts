import { serverOf } from '@tributary/clickhouse';
import { createChdbClickHouse, type ChdbClickHouse } from '@tributary/test-support/chdb';
import { loadHogQLParser } from './index.js';
import { describeMaterializedAnswers } from '../test/materialized-suite.js';

/** Materialized properties on a current ClickHouse (chdb's 26.x), whose parts are filled with MATERIALIZE COLUMN. */
const DATABASE = 'tributary';
let clickhouse: ChdbClickHouse;

describeMaterializedAnswers(async () => {
  await loadHogQLParser();
  clickhouse = await createChdbClickHouse(DATABASE);
  return { clickhouse, server: await serverOf(clickhouse), topology: { cluster: null, database: DATABASE } };
});

afterAll(() => clickhouse.close());
