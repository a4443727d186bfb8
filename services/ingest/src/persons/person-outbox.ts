import { distinctIdRow, personRow, type PersonRowOut } from '@tributary/clickhouse';
import type { PersonCache } from '@tributary/control-plane';
import type { Logger } from '@tributary/logger';
import { PERSON_RECORD_COLUMNS, type PersonRecord } from '@tributary/persons';
import { withTransaction, type Pool, type PoolClient } from '@tributary/postgres';
import { RowBuffer } from '../clickhouse-rows.js';
import type { RefusedRow, RowWriter } from '../clickhouse-writer.js';
import { groupBy } from '../group-by.js';

/**
 * Which ClickHouse copies a chunk's committed person changes owe. A person that still exists is
 * named by its uuid only: its row, and those of its distinct ids (every distinct id a chunk
 * claims or moves ends on such a person), are read back from Postgres when needed, in a state at
 * least as new as the chunk's. A person the chunk merged away no longer exists there, so its
 * tombstone row travels whole.
 */
export interface OutboxEntry {
  persons: string[];
  deleted: PersonRowOut[];
}

/**
 * Records the entry inside the chunk's own transaction, so the copies are owed exactly when the
 * changes are made. Null when the chunk changed no person.
 */
export async function recordOutboxEntry(client: PoolClient, entry: OutboxEntry): Promise<number | null> {
  if (entry.persons.length === 0 && entry.deleted.length === 0) return null;
  const { rows } = await client.query<{ id: number }>('INSERT INTO ingest_outbox (payload) VALUES ($1) RETURNING id', [JSON.stringify(entry)]);
  return rows[0]!.id;
}

export interface PersonOutboxOptions {
  pool: Pool;
  /** Writes the copies; the one the partitions use, so refused rows count towards one limit. */
  writer: Pick<RowWriter, 'writeAlone'>;
  /** Keeps the copies ClickHouse refused for their content, on the dead-letter topic. */
  sendRefusedRows: (rows: readonly RefusedRow[]) => Promise<void>;
  personCache: PersonCache;
  logger: Logger;
  /** An entry older than this was left by a process that died: a live one clears its own within seconds. */
  staleAfterMs?: number;
  sweepEveryMs?: number;
}

/**
 * The ClickHouse copies of person changes survive a crash between the Postgres commit and the
 * ClickHouse insert (found by the chaos suite: persons merged in Postgres stayed apart in
 * ClickHouse). The normal path acknowledges each entry once its rows are in; the sweeper writes
 * the rows of entries nobody acknowledged and forgets the decide cache entries of their persons,
 * which may hold a state from before the changes. Writing a copy twice is harmless: the tables
 * keep the highest version. Replicas sweep disjoint entries (SKIP LOCKED).
 */
export class PersonOutbox {
  private timer?: NodeJS.Timeout;
  private sweeping: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: PersonOutboxOptions) {}

  async acknowledge(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.options.pool
      .query('DELETE FROM ingest_outbox WHERE id = ANY($1::bigint[])', [ids])
      .catch((error: unknown) => this.options.logger.warn({ err: error, entries: ids.length }, 'outbox entries not cleared; the sweeper will rewrite their rows'));
  }

  /** Writes the rows of stale entries and removes them; returns how many were swept. */
  async sweep(): Promise<number> {
    const { pool, writer, sendRefusedRows, personCache, logger } = this.options;
    return withTransaction(pool, async (client) => {
      // Entries of the release before carried every row whole and no `deleted`; their persons are read back like the others.
      const { rows } = await client.query<{ id: number; payload: { persons: (string | PersonRowOut)[]; deleted?: PersonRowOut[] } }>(
        `SELECT id, payload FROM ingest_outbox WHERE created_at < now() - make_interval(secs => $1::double precision / 1000)
          ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED`,
        [this.options.staleAfterMs ?? 60_000],
      );
      if (rows.length === 0) return 0;
      const buffer = new RowBuffer();
      const uuids = new Set<string>();
      for (const { payload } of rows) {
        for (const row of payload.deleted ?? []) buffer.persons.add(row);
        for (const person of payload.persons) uuids.add(typeof person === 'string' ? person : person.id);
      }
      // A person deleted since (through the API) has had its tombstone copies written by the deleter.
      const persons = await client.query<PersonRecord>(`SELECT ${PERSON_RECORD_COLUMNS} FROM persons p WHERE p.uuid = ANY($1::uuid[])`, [[...uuids]]);
      for (const person of persons.rows) buffer.persons.add(personRow(person, { deleted: false }));
      const distinctIds = await client.query<{ team_id: number; distinct_id: string; uuid: string; version: number }>(
        'SELECT d.team_id, d.distinct_id, p.uuid, d.version FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id WHERE p.uuid = ANY($1::uuid[])',
        [[...uuids]],
      );
      for (const d of distinctIds.rows) buffer.distinctIds.add(distinctIdRow(d.team_id, { distinctId: d.distinct_id, personUuid: d.uuid, version: d.version }, { deleted: false }));
      // A copy ClickHouse refuses for its content would fail every sweep and hold back every entry
      // after it: it goes to the dead-letter topic instead, as the partitions' refused rows do
      // (a merged-away person's tombstone has no later change to write it again).
      const refused = await writer.writeAlone(buffer);
      if (refused.length > 0) {
        await sendRefusedRows(refused);
        logger.error({ rows: refused.length, tables: [...new Set(refused.map((r) => r.table))] }, 'person copies ClickHouse refused sent to the dead-letter topic');
      }
      for (const [teamId, ids] of groupBy(distinctIds.rows, (d) => d.team_id, (d) => d.distinct_id)) await personCache.forget(teamId, ids);
      await client.query('DELETE FROM ingest_outbox WHERE id = ANY($1::bigint[])', [rows.map((r) => r.id)]);
      logger.info({ entries: rows.length }, 'wrote person copies a stopped process owed ClickHouse');
      return rows.length;
    });
  }

  start(): void {
    this.timer = setInterval(() => {
      this.sweeping = this.sweep().catch((error: unknown) => this.options.logger.warn({ err: error }, 'outbox sweep failed; retrying later'));
    }, this.options.sweepEveryMs ?? 30_000);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }
}
