import type { ChdbClickHouse } from '@tributary/test-support/chdb';
import { deletionSuite } from '../test/deletion-suite.js';

/** The deletion batch's statements (`test/deletion-suite.ts`) on a current ClickHouse (chdb's in-process 26.x). */
let clickhouse: ChdbClickHouse;
beforeAll(async () => {
  clickhouse = await (await import('@tributary/test-support/chdb')).createChdbClickHouse();
});
afterAll(() => clickhouse.close());

deletionSuite(() => ({ clickhouse, topology: { cluster: null, database: 'tributary' } }));
