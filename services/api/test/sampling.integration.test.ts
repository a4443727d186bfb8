import { describeSampling } from './sampling-suite.js';

/** Insights' `samplingFactor` on the stack's ClickHouse 18.16 (`sampling-suite.ts`). */
describeSampling('server');
