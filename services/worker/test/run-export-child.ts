/**
 * One worker process running export runs one after another, for the tests that kill a worker
 * mid-run: `node --import tsx services/worker/test/run-export-child.ts <run id>...`. Exits 0 when
 * every run completed, 3 when another worker held one.
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
let allCompleted = true;
for (const runId of process.argv.slice(2)) if ((await executeRun(runId, deps, false)) !== 'completed') allCompleted = false;
await pool.end();
await clickhouse.close();
process.exit(allCompleted ? 0 : 3);
