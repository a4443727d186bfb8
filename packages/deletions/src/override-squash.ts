import { formatDateTime, inList, sql, type ClickHouse } from '@tributary/clickhouse';
import { DEFAULT_PERSONS_ON_EVENTS_MODE, type PersonsOnEventsMode } from '@tributary/hogql';
import type { Pool, PoolClient } from '@tributary/postgres';
import { mutateEvents, whileLocked, type EventDeletionDeps } from './deletion-batch.js';

const OVERRIDE_MODE: PersonsOnEventsMode = 'person_id_override_properties_joined';

/** The daily override squash: 03:00 UTC, before the retention job (04:00) and the weekly deletion batch (05:00). */
export const SQUASH_SCHEDULE = { id: 'daily-override-squash', pattern: '0 3 * * *', tz: 'UTC' } as const;
export const SQUASH_QUEUE = 'override-squash';
export const SQUASH_JOB = 'override-squash';

/** Arbitrary but fixed, apart from the other jobs': one worker in the deployment squashes at a time. */
const SQUASH_LOCK_ID = 727_003;

/**
 * A move younger than this is left for the next run: ingest may still hold events it gave the
 * person before the move (its buffers, a retried insert), and they would land after the rewrite.
 */
export const SQUASH_SETTLE_MS = 60 * 60_000;

/**
 * Bytes of distinct ids and persons one mutation lists. A single server keeps mutations on disk,
 * so its budget is only a parse's worth. In a cluster each server's DDL worker parses the
 * statement again under its own defaults (256 KiB), and ZooKeeper stores it.
 */
export const SQUASH_STATEMENT_BYTES = { cluster: 200 * 1024, single: 8 * 1024 * 1024 } as const;

/** Raised for the mutation's own statement: each listed id is an element of the IN list's AST. */
const SQUASH_SETTINGS = (budget: number) => ({ max_query_size: budget + 64 * 1024, max_ast_elements: 1_000_000, max_expanded_ast_elements: 1_000_000 });

/** What an id adds to the statement: its name twice (the IN list and transform's), quoted and escaped at worst, and its person. */
const listedBytes = (m: MovedDistinctId) => 2 * (2 * Buffer.byteLength(m.distinct_id) + 4) + 40;

/** The moves split into mutations: each one project's ids, as many as `budget` bytes list, and at least one. */
export function squashChunks(moved: readonly MovedDistinctId[], budget: number): MovedDistinctId[][] {
  const chunks: MovedDistinctId[][] = [];
  let chunk: MovedDistinctId[] = [];
  let bytes = 0;
  for (const move of moved) {
    if (chunk.length > 0 && (move.team_id !== chunk[0]!.team_id || bytes + listedBytes(move) > budget)) {
      chunks.push(chunk);
      [chunk, bytes] = [[], 0];
    }
    chunk.push(move);
    bytes += listedBytes(move);
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/** The projects whose queries read persons on events: only their moves are squashed. */
export async function overrideModeProjects(client: Pool | PoolClient): Promise<number[]> {
  const { rows } = await client.query<{ id: string | number }>(
    "SELECT id FROM projects WHERE coalesce(modifiers->>'personsOnEventsMode', $1) = $2 ORDER BY id",
    [DEFAULT_PERSONS_ON_EVENTS_MODE, OVERRIDE_MODE],
  );
  return rows.map((r) => Number(r.id));
}

/** A distinct id whose events carry another person than its identity row's latest version says. */
export interface MovedDistinctId {
  team_id: number;
  distinct_id: string;
  person_id: string;
  version: number;
}

/**
 * The moved distinct ids (above version 0, not deleted) of `projects` whose latest version is
 * newer than the one their events were last rewritten to, and was stored in ClickHouse before
 * `settledBefore`.
 */
export async function movedDistinctIds(clickhouse: ClickHouse, projects: readonly number[], settledBefore: Date): Promise<MovedDistinctId[]> {
  if (projects.length === 0) return [];
  const rows = await clickhouse.query<{ team_id: string | number; distinct_id: string; current_person: string; latest: string | number }>(
    sql`SELECT team_id, distinct_id, current_person, latest FROM (
          SELECT team_id, distinct_id, toString(argMax(person_id, version)) AS current_person, max(version) AS latest, max(_timestamp) AS stored
          FROM person_distinct_id WHERE ${inList(sql`team_id`, projects)} GROUP BY team_id, distinct_id
          HAVING latest > 0 AND argMax(is_deleted, version) = 0 AND stored < ${settledBefore}) AS moved
        ANY LEFT JOIN (SELECT team_id, distinct_id, max(version) AS squashed FROM squashed_distinct_ids WHERE ${inList(sql`team_id`, projects)} GROUP BY team_id, distinct_id) AS done
        USING (team_id, distinct_id)
        WHERE latest > squashed
        ORDER BY team_id, distinct_id`,
  );
  return rows.map((r) => ({ team_id: Number(r.team_id), distinct_id: r.distinct_id, person_id: r.current_person, version: Number(r.latest) }));
}

export interface SquashResult {
  /** Distinct ids whose events now carry their current person. */
  distinctIds: number;
  /** Mutations it ran (a project's ids, as many as SQUASH_STATEMENT_BYTES lists). */
  mutations: number;
  skipped: boolean;
}

/**
 * PostHog's override squash, for the projects in the override mode: rewrites the events of each
 * moved distinct id to the person its identity row now names, one `ALTER TABLE ... UPDATE` per
 * chunk of a project's ids (each one rewrites every part holding the project's events, so chunks
 * are as large as the statement may be), waits for it, and only then records the ids as squashed
 * at that version; after the last chunk, each project's cut (`override_squashes`): every move
 * stored before it is squashed. Persons-on-events queries then join only the moves made since,
 * and group only the identity rows stored since the cut. A crash before a record leaves the ids to
 * the next run, which rewrites them to the same person again.
 */
export async function runOverrideSquash(deps: EventDeletionDeps & { settleMs?: number }): Promise<SquashResult> {
  const result = await whileLocked(deps.pool, SQUASH_LOCK_ID, async (client) => {
    const now = (deps.clock ?? (() => new Date()))();
    const projects = await overrideModeProjects(client);
    const settledBefore = new Date(now.getTime() - (deps.settleMs ?? SQUASH_SETTLE_MS));
    const moved = await movedDistinctIds(deps.clickhouse, projects, settledBefore);
    const budget = SQUASH_STATEMENT_BYTES[deps.topology.cluster === null ? 'single' : 'cluster'];
    const chunks = squashChunks(moved, budget);
    for (const chunk of chunks) {
      const ids = chunk.map((m) => m.distinct_id);
      const persons = chunk.map((m) => m.person_id);
      // 18.16's transform takes strings, not UUIDs: the person goes through its text.
      await mutateEvents(
        deps,
        sql`UPDATE person_id = toUUID(transform(distinct_id, ${ids}, ${persons}, toString(person_id))) WHERE team_id = ${chunk[0]!.team_id} AND ${inList(sql`distinct_id`, ids)}`,
        30 * 60_000,
        SQUASH_SETTINGS(budget),
      );
      await deps.clickhouse.insert('squashed_distinct_ids', ['team_id', 'distinct_id', 'version'], chunk.map((m) => ({ team_id: m.team_id, distinct_id: m.distinct_id, version: m.version })));
    }
    // Recorded only once every chunk is: queries then group only the ids stored since.
    if (projects.length > 0) await deps.clickhouse.insert('override_squashes', ['team_id', 'settled_before'], projects.map((team_id) => ({ team_id, settled_before: formatDateTime(settledBefore) })));
    const mutations = chunks.length;
    deps.logger.info({ distinctIds: moved.length, mutations }, 'override squash finished');
    return { distinctIds: moved.length, mutations, skipped: false };
  });
  if (result === null) deps.logger.info('another worker is running the override squash');
  return result ?? { distinctIds: 0, mutations: 0, skipped: true };
}
