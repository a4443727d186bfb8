import { Counter, type Registry } from '@tributary/http';
import type { RunExecutorDeps } from './run-executor.js';

/** What batch exports wrote and how their runs ended, for Prometheus. */
export function exportMetrics(registry: Registry): NonNullable<RunExecutorDeps['observe']> {
  const records = new Counter({ name: 'tributary_batch_export_records_total', help: 'Records batch exports wrote to their destinations.', registers: [registry] });
  const bytes = new Counter({ name: 'tributary_batch_export_bytes_total', help: 'Bytes batch exports wrote to their destinations.', registers: [registry] });
  const runs = new Counter({ name: 'tributary_batch_export_runs_total', help: 'Batch export run attempts, by how they ended.', labelNames: ['status'] as const, registers: [registry] });
  return (event) => {
    if (event.kind === 'part') {
      records.inc(event.records);
      bytes.inc(event.bytes);
    } else runs.inc({ status: event.status });
  };
}
