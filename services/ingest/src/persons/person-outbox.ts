import type { ClickHouse, DistinctIdRowOut, PersonRowOut } from '@tributary/clickhouse';
import type { PersonCache } from '@tributary/control-plane';
import type { Logger } from '@tributary/logger';
import { withTransaction, type Pool, type PoolClient } from '@tributary/postgres';
import { RowBuffer } from '../clickhouse-rows.js';
import { writeRows } from '../clickhouse-writer.js';

/** What a chunk's committed person changes owe ClickHouse, and whose decide cache entries they set. */
export interface OutboxEntry {
  persons: PersonRowOut[];
  distinctIds: DistinctIdRowOut[];
  cached: { teamId: number; distinctIds: string[] }[];
}

/**
 * Records the entry inside the chunk's own transaction, so the copies are owed exactly when the
 * changes are made. Null when the chunk changed no person.
 */
export async function recordOutboxEntry(client: PoolClient, entry: OutboxEntry): Promise<number | null> {
  if (entry.persons.length === 0 && entry.distinctIds.length === 0) return null;
  const { rows } = await client.query<{ id: number }>('INSERT INTO ingest_outbox (payload) VALUES ($1) RETURNING id', [JSON.stringify(entry)]);
  return rows[0]!.id;
}

export interface PersonOutboxOptions {
  pool: Pool;
  clickhouse: ClickHouse;
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
 * the rows of entries nobody acknowledged and forgets their decide cache entries, which may hold
 * a state from before the changes. Writing a copy twice is harmless: the tables keep the highest
 * version. Replicas sweep disjoint entries (SKIP LOCKED).
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
    const { pool, clickhouse, personCache } = this.options;
    return withTransaction(pool, async (client) => {
      const { rows } = await client.query<{ id: number; payload: OutboxEntry }>(
        `SELECT id, payload FROM ingest_outbox WHERE created_at < now() - make_interval(secs => $1::double precision / 1000)
          ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED`,
        [this.options.staleAfterMs ?? 60_000],
      );
      if (rows.length === 0) return 0;
      const buffer = new RowBuffer();
      for (const { payload } of rows) {
        buffer.persons.push(...payload.persons);
        buffer.distinctIds.push(...payload.distinctIds);
      }
      await writeRows(clickhouse, buffer);
      for (const { payload } of rows) for (const { teamId, distinctIds } of payload.cached) await personCache.forget(teamId, distinctIds);
      await client.query('DELETE FROM ingest_outbox WHERE id = ANY($1::bigint[])', [rows.map((r) => r.id)]);
      this.options.logger.info({ entries: rows.length }, 'wrote person copies a stopped process owed ClickHouse');
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
