import type { ChdbClickHouse } from '@tributary/test-support/chdb';
import { eventsListSuite, newestFirstSuite } from './events-list-suite.js';

/** The events list's statements (`events-list-suite.ts`) on a current ClickHouse (chdb's in-process 26.x). */
let clickhouse: ChdbClickHouse;
beforeAll(async () => {
  clickhouse = await (await import('@tributary/test-support/chdb')).createChdbClickHouse();
});
afterAll(() => clickhouse.close());

eventsListSuite(() => clickhouse);
newestFirstSuite(() => clickhouse);
