import { isolationSuite } from '../test/isolation-suite.js';

/** The tenant isolation suite (`test/isolation-suite.ts`) on the stack's ClickHouse 18.16; `query-isolation-chdb.test.ts` runs it on 26. */
isolationSuite('server');
