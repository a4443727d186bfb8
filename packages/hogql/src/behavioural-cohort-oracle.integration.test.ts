import { behaviouralCohortOracle } from '../test/behavioural-cohort-oracle.js';

/** Behavioural cohorts against the plain reference (`test/behavioural-cohort-oracle.ts`) on the stack's ClickHouse (18.16). */
behaviouralCohortOracle('server');
