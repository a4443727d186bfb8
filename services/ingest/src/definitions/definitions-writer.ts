import { DefinitionType, linksToEvent } from '@tributary/ingestion';
import type { Logger } from '@tributary/logger';
import type { Pool } from '@tributary/postgres';
import { DefinitionUpdates, type PropertyDefinitionUpdate } from './definition-updates.js';
import type { DefinitionsRecorder } from './definitions-recorder.js';

export interface DefinitionsWriterDeps {
  pool: Pick<Pool, 'query'>;
  recorder: Pick<DefinitionsRecorder, 'recorded'>;
  logger: Logger;
  /** Called once per failed (or slow) write, for the metrics. */
  failed?: (reason: 'error' | 'slow' | 'dropped') => void;
  /** How long a chunk's acknowledgement waits for its definitions at most. */
  waitMs?: number;
  /** Definitions kept for another attempt after failed writes, at most; the rest are dropped and counted. */
  maxRetained?: number;
}

const byKey = <T>(items: readonly T[], key: (item: T) => string, merge: (a: T, b: T) => T): T[] => {
  const map = new Map<string, T>();
  for (const item of items) {
    const k = key(item);
    const earlier = map.get(k);
    map.set(k, earlier ? merge(earlier, item) : item);
  }
  // Rows in one order for every writer, so concurrent upserts of the same definitions take their locks alike.
  return [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, item]) => item);
};

/**
 * Writes the definitions chunks found to Postgres, every chunk waiting on one write at a time
 * gathered into a few upserts. `record` never rejects: a failed write is logged, counted and kept
 * for the next one, and a chunk waits `waitMs` at most, so the definitions can neither fail nor
 * stall ingestion. Only a process that stops while Postgres refuses these writes loses what it
 * kept; the definitions come back with the next event of each name.
 */
export class DefinitionsWriter {
  private pending = new DefinitionUpdates();
  private writing: Promise<void> = Promise.resolve();
  private scheduled: Promise<void> | null = null;
  private readonly waitMs: number;
  private readonly maxRetained: number;

  constructor(private readonly deps: DefinitionsWriterDeps) {
    this.waitMs = deps.waitMs ?? 5_000;
    this.maxRetained = deps.maxRetained ?? 50_000;
  }

  /** Resolves once `updates` are written (with anything kept from failed writes), or failed, or `waitMs` passed. */
  record(updates: DefinitionUpdates): Promise<void> {
    this.pending.append(updates);
    if (this.pending.size === 0) return Promise.resolve();
    // One write at a time: what arrives while one runs joins the next.
    this.scheduled ??= this.writing.then(() => {
      const batch = this.pending;
      this.pending = new DefinitionUpdates();
      this.scheduled = null;
      this.writing = this.write(batch);
      return this.writing;
    });
    return this.bounded(this.scheduled);
  }

  private async bounded(write: Promise<void>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const slow = new Promise<'slow'>((resolve) => (timer = setTimeout(() => resolve('slow'), this.waitMs)));
    try {
      if ((await Promise.race([write, slow])) === 'slow') {
        this.deps.logger.warn({ waitMs: this.waitMs }, 'definitions write is slow; the chunk goes on without it');
        this.deps.failed?.('slow');
      }
    } finally {
      clearTimeout(timer);
    }
  }

  private async write(batch: DefinitionUpdates): Promise<void> {
    try {
      await this.upsert(batch);
      this.deps.recorder.recorded(batch);
    } catch (error) {
      this.deps.logger.warn({ err: error, definitions: batch.size }, 'definitions write failed; kept for the next write');
      this.deps.failed?.('error');
      if (this.pending.size + batch.size > this.maxRetained) {
        this.deps.failed?.('dropped');
        return;
      }
      this.pending.append(batch);
    }
  }

  private async upsert(batch: DefinitionUpdates): Promise<void> {
    const events = byKey(batch.events, (e) => `${e.teamId}\u0000${e.name}`, (a, b) => (a.seenAt >= b.seenAt ? a : b));
    if (events.length > 0) {
      // A project deleted meanwhile has no definitions to keep: its rows are skipped, not a failed batch.
      await this.deps.pool.query(
        `INSERT INTO event_definitions (team_id, name, created_at, last_seen_at)
         SELECT u.team_id, u.name, u.seen_at, u.seen_at FROM unnest($1::int[], $2::text[], $3::timestamptz[]) AS u(team_id, name, seen_at)
          WHERE EXISTS (SELECT 1 FROM projects WHERE projects.id = u.team_id)
         ON CONFLICT (team_id, name) DO UPDATE SET last_seen_at = GREATEST(event_definitions.last_seen_at, EXCLUDED.last_seen_at)`,
        [events.map((e) => e.teamId), events.map((e) => e.name), events.map((e) => e.seenAt)],
      );
    }
    const properties = byKey(batch.properties, (p) => `${p.teamId}\u0000${p.type}\u0000${p.groupTypeIndex ?? -1}\u0000${p.name}`, (a, b) => (a.propertyType === null ? b : a));
    if (properties.length > 0) {
      // The first type inferred stays: a later value of another type does not change it. A property of no
      // type yet (an object, a list, null) is not numerical: NULL there would fail every project's batch.
      await this.deps.pool.query(
        `INSERT INTO property_definitions (team_id, name, type, group_type_index, property_type, is_numerical)
         SELECT u.team_id, u.name, u.type, u.group_type_index, u.property_type, coalesce(u.property_type = 'Numeric', false)
           FROM unnest($1::int[], $2::text[], $3::smallint[], $4::smallint[], $5::text[]) AS u(team_id, name, type, group_type_index, property_type)
          WHERE EXISTS (SELECT 1 FROM projects WHERE projects.id = u.team_id)
         ON CONFLICT (team_id, type, (coalesce(group_type_index, -1)), name)
         DO UPDATE SET property_type = EXCLUDED.property_type, is_numerical = EXCLUDED.is_numerical
          WHERE property_definitions.property_type IS NULL AND EXCLUDED.property_type IS NOT NULL`,
        [properties.map((p) => p.teamId), properties.map((p) => p.name), properties.map((p) => p.type), properties.map((p) => p.groupTypeIndex), properties.map((p) => p.propertyType)],
      );
    }
    const links = byKey(
      batch.properties.filter((p): p is PropertyDefinitionUpdate & { event: string } => p.type === DefinitionType.event && p.event !== null && linksToEvent(p.name)),
      (p) => `${p.teamId}\u0000${p.event}\u0000${p.name}`,
      (a) => a,
    );
    if (links.length > 0) {
      await this.deps.pool.query(
        `INSERT INTO event_properties (team_id, event, property)
         SELECT u.team_id, u.event, u.property FROM unnest($1::int[], $2::text[], $3::text[]) AS u(team_id, event, property)
          WHERE EXISTS (SELECT 1 FROM projects WHERE projects.id = u.team_id)
         ON CONFLICT DO NOTHING`,
        [links.map((p) => p.teamId), links.map((p) => p.event), links.map((p) => p.name)],
      );
    }
  }
}
