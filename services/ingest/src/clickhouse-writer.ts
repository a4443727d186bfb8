import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS, type ClickHouse } from '@tributary/clickhouse';
import { EVENT_COLUMNS, GROUP_COLUMNS, WARNING_COLUMNS, type RowBuffer } from './clickhouse-rows.js';

/**
 * Writes a batch's rows. Identity rows go first: an event is only visible through the API once
 * its person copy can be found, and a replay after a crash between the inserts rewrites the
 * same versioned rows, which ReplacingMergeTree folds together.
 */
export async function writeRows(clickhouse: ClickHouse, rows: RowBuffer): Promise<void> {
  await Promise.all([
    clickhouse.insert('person', PERSON_COLUMNS, rows.persons),
    clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, rows.distinctIds),
    clickhouse.insert('groups', GROUP_COLUMNS, rows.groups),
    clickhouse.insert('ingestion_warnings', WARNING_COLUMNS, rows.warnings),
  ]);
  await clickhouse.insert('events', EVENT_COLUMNS, rows.events);
}
