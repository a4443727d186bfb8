export { BatchExportStore, type BackfillRow, type BatchExportRow, type DestinationType, type NewBatchExport, type RunCursor, type RunRow, type RunStatus } from './batch-export-store.js';
export { windowTimeOf, type WindowTime } from './window-time.js';
export { EXPORT_INTERVALS, backfillWindows, dueWindows, intervalMs, windowStart, type ExportInterval, type ExportWindow } from './windows.js';
export {
  DESTINATION_CONFIG_SCHEMAS,
  ExportError,
  NonRetryableExportError,
  createDestination,
  type Destination,
  type DestinationSpec,
  type EncodedEvent,
  jsonLine,
  jsonLineFields,
  type ColumnKind,
  type ExportModel,
  type ExportPart,
  type ExportRecord,
  type HttpDestinationConfig,
  type PostgresDestinationConfig,
  type S3DestinationConfig,
  type WriteResult,
} from './destinations/destination.js';
export { destinationRefusal } from './destinations/destination-refusal.js';
export { DestinationGuard, DestinationUnresolved, systemResolve, type DestinationPolicy, type Resolve } from './destination-address/destination-guard.js';
export { DestinationRefused } from './destination-address/destination-refused.js';
export { destinationPolicy } from './destination-address/stack-destinations.js';
