import { createClickHouse, topologyOf } from '@tributary/clickhouse';
import { testConfig } from '@tributary/test-support';
import { MUTATION_REQUEST_TIMEOUT_MS } from './deletion-batch.js';
import { deletionSuite } from '../test/deletion-suite.js';

/** The deletion batch's statements (`test/deletion-suite.ts`) on the stack's ClickHouse (18.16; a cluster's with TOPOLOGY=cluster). */
const config = testConfig();
const clickhouse = createClickHouse(config, { requestTimeoutMs: MUTATION_REQUEST_TIMEOUT_MS });
afterAll(() => clickhouse.close());

deletionSuite(() => ({ clickhouse, topology: topologyOf(config) }));
