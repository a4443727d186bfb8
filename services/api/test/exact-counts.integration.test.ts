import { describeExactCounts } from './exact-counts-suite.js';

/** Unique counts on the installation's ClickHouse (18.16); `exact-counts-chdb.test.ts` runs them on 26.x. */
describeExactCounts('server');
