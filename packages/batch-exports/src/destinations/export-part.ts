import type { WindowTime } from '../window-time.js';
/** What a batch export exports: PostHog's `events` and `persons` models. */
export type ExportModel = 'events' | 'persons';

/**
 * One exported row, times as ISO strings, JSON columns as objects.
 *
 * - events: `uuid`, `event`, `properties`, `distinct_id`, `team_id`, `timestamp`, `created_at`,
 *   `elements_chain`, `person_id`, `person_properties`, `inserted_at`.
 * - persons: one row per distinct id, as PostHog's persons model (its `persons_batch_export`
 *   query): `team_id`, `distinct_id`, `person_id`, `properties`, `person_version`,
 *   `person_distinct_id_version`, `created_at`, `is_deleted`, `inserted_at`. The two versions say
 *   which of two rows for one distinct id is newer.
 */
export type ExportRecord = Record<string, unknown>;

export interface ExportPart {
  /** The batch export's uuid. */
  exportId: string;
  /** The run's uuid. */
  runId: string;
  teamId: number;
  model: ExportModel;
  /** The run's data interval, [start, end), by the time `by` says (`windowTimeOf`). */
  window: { start: Date; end: Date; by: WindowTime };
  /** 0-based, deterministic: the same window always splits into the same parts with the same records in the same order. */
  index: number;
  records: ExportRecord[];
  /**
   * For a destination that `takesEncodedEvents`, the part's events as ClickHouse encoded them
   * instead of `records` (which is then empty).
   */
  encoded?: EncodedEvent[];
}

/** An event as the line of an S3 JSON-lines file, built by ClickHouse (see the worker's window reader). */
export interface EncodedEvent {
  /** The event's name as a JSON string literal, as JSON.stringify writes it: what the event filter compares. */
  event: Buffer;
  /** The line, newline included, exactly as `jsonLine` writes the event's record. */
  line: Buffer;
}

export interface WriteResult {
  /** Records written, after the destination's event filter. */
  records: number;
  /** Bytes sent to the destination. */
  bytes: number;
}

export interface Destination {
  /** Whether the run gives events' parts as `encoded` lines rather than records; records when absent. */
  readonly takesEncodedEvents?: boolean;
  /** At most this many parts written at once, whatever the worker's setting; no limit of its own when absent. */
  readonly maxPartsInFlight?: number;
  /** Writes one part. Idempotent: writing a part again (a retried or resumed run) leaves the destination as if it had been written once. */
  write(part: ExportPart): Promise<WriteResult>;
  close(): Promise<void>;
}
