import { describeExactCounts } from './exact-counts-suite.js';

/** Unique counts on a current ClickHouse (chdb's 26.x); `exact-counts.integration.test.ts` runs them on 18.16. */
describeExactCounts('chdb');
