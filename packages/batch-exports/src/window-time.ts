import type { RunRow } from './batch-export-store.js';

/**
 * Which time puts a row in a run's window. A scheduled run takes what was stored in it
 * (`inserted_at`; a person's `_timestamp`), so an event that arrives late is still exported, by
 * the run of the window it arrived in. A backfill takes what happened in it (an event's
 * `timestamp`; a person's `created_at`, the time of its first event), as PostHog's
 * `events_batch_export_backfill` view does, so history imported today lands in its past windows.
 */
export type WindowTime = 'inserted_at' | 'timestamp';

export const windowTimeOf = (run: Pick<RunRow, 'backfill_id'>): WindowTime => (run.backfill_id === null ? 'inserted_at' : 'timestamp');
