import { randomInt } from 'node:crypto';
import type { ChdbClickHouse } from '@tributary/test-support/chdb';
import { windowReaderSuite } from './window-reader-suite.js';

/** The export window reader's statements (`window-reader-suite.ts`) on a current ClickHouse (chdb's in-process 26.x). */
let clickhouse: ChdbClickHouse;
let nextTeam = 700_000_000 + randomInt(90_000_000);
beforeAll(async () => {
  clickhouse = await (await import('@tributary/test-support/chdb')).createChdbClickHouse();
});
afterAll(() => clickhouse.close());

windowReaderSuite(() => ({ clickhouse, newTeamId: async () => nextTeam++ }));
