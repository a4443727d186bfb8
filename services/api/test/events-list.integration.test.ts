import { createClickHouse } from '@tributary/clickhouse';
import { testConfig } from '@tributary/test-support';
import { eventsListSuite, newestFirstSuite } from './events-list-suite.js';

/** The events list's statements (`events-list-suite.ts`) on the stack's ClickHouse 18.16. */
const clickhouse = createClickHouse(testConfig());
afterAll(() => clickhouse.close());

eventsListSuite(() => clickhouse);
newestFirstSuite(() => clickhouse);
