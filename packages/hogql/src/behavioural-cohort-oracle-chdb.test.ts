import { behaviouralCohortOracle } from '../test/behavioural-cohort-oracle.js';

/** Behavioural cohorts against the plain reference (`test/behavioural-cohort-oracle.ts`) on a current ClickHouse (chdb's in-process 26.x), printed for it. */
behaviouralCohortOracle('chdb');
