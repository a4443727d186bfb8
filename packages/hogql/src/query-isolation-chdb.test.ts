import { isolationSuite } from '../test/isolation-suite.js';

/** The tenant isolation suite (`test/isolation-suite.ts`) on a current ClickHouse (chdb's in-process 26.x), printed for it. */
isolationSuite('chdb');
