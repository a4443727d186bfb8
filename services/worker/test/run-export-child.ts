/**
 * One worker process running one export run, for the test that kills a worker mid-run:
 * `node --import tsx services/worker/test/run-export-child.ts <run id>`. Exits 0 when the run
 * completed, 3 when another worker holds it.
 */
import { BatchExportStore, DestinationGuard, createDestination, destinationPolicy, type DestinationSpec } from '@tributary/batch-exports';
import { createClickHouse } from '@tributary/clickhouse';
import { loadConfig } from '@tributary/config';
import { createLogger } from '@tributary/logger';
import { createPool } from '@tributary/postgres';
import { executeRun } from '../src/batch-exports/run-executor.js';

const config = loadConfig();
const pool = createPool(config, { max: 2 });
const clickhouse = createClickHouse(config, { requestTimeoutMs: 600_000 });
// The test's destinations are this machine's S3Proxy, Postgres and HTTP receivers.
const guard = new DestinationGuard(destinationPolicy({ ...config, batchExportAllowedDestinations: ['127.0.0.0/8'] }));
const deps = { store: new BatchExportStore(pool), clickhouse, createDestination: (spec: DestinationSpec) => createDestination(spec, guard), logger: createLogger('export-child', config.logLevel), partRecords: config.batchExportPartRecords, partsInFlight: config.batchExportPartsInFlight, leaseMs: config.batchExportLeaseMs };
const outcome = await executeRun(process.argv[2]!, deps, false);
await pool.end();
await clickhouse.close();
process.exit(outcome === 'completed' ? 0 : 3);
