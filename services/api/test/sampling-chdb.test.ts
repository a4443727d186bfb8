import { describeSampling } from './sampling-suite.js';

/** Insights' `samplingFactor` on a current ClickHouse (chdb's 26.x): the same answers as on 18.16 (`sampling.integration.test.ts`). */
describeSampling('chdb');
