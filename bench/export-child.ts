/**
 * bench/export.ts's worker: one process running the given export runs one after another, as the
 * worker's queue would, so its peak memory is the export's alone. Prints one JSON line last: the
 * runs' wall time, the part of it spent in the destination's `write` (encoding and sending) and in
 * recording parts, and the process's peak RSS.
 * `node --import tsx bench/export-child.ts <run id>...`
 */
import { BatchExportStore, DestinationGuard, createDestination, destinationPolicy, type Destination, type DestinationSpec } from '@tributary/batch-exports';
import { createClickHouse } from '@tributary/clickhouse';
import { loadConfig } from '@tributary/config';
import { createLogger } from '@tributary/logger';
import { createPool } from '@tributary/postgres';
import { executeRun } from '../services/worker/src/batch-exports/run-executor.js';

const config = loadConfig();
const pool = createPool(config, { max: 2 });
const clickhouse = createClickHouse(config, { requestTimeoutMs: 600_000 });
const store = new BatchExportStore(pool);
// The bench's destinations are this machine's S3Proxy and Postgres.
const guard = new DestinationGuard(destinationPolicy({ ...config, batchExportAllowedDestinations: ['127.0.0.0/8'] }));

let writeMs = 0;
let recordMs = 0;
const timed = async <T>(work: () => Promise<T>, add: (ms: number) => void): Promise<T> => {
  const started = performance.now();
  try {
    return await work();
  } finally {
    add(performance.now() - started);
  }
};
const timedDestination = (spec: DestinationSpec): Destination => {
  const destination = createDestination(spec, guard);
  return {
    takesEncodedEvents: destination.takesEncodedEvents,
    maxPartsInFlight: destination.maxPartsInFlight,
    write: (part) => timed(() => destination.write(part), (ms) => (writeMs += ms)),
    close: () => destination.close(),
  };
};
const partWritten = store.partWritten.bind(store);
store.partWritten = (...args) => timed(() => partWritten(...args), (ms) => (recordMs += ms));

const deps = { store, clickhouse, createDestination: timedDestination, logger: createLogger('export-bench', config.logLevel), partRecords: config.batchExportPartRecords, partsInFlight: config.batchExportPartsInFlight, leaseMs: config.batchExportLeaseMs };
const started = performance.now();
for (const runId of process.argv.slice(2)) {
  // The last attempt: a failure is final and shows in the run's status, which the bench checks.
  if ((await executeRun(runId, deps, true)) === 'busy') throw new Error(`run ${runId} is held by another worker`);
}
const ms = performance.now() - started;
console.log(JSON.stringify({ ms, writeMs, recordMs, peakRssMb: process.resourceUsage().maxRSS / 1024 }));
await pool.end();
await clickhouse.close();
