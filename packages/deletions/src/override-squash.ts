import { inList, sql, type ClickHouse } from '@tributary/clickhouse';
import { mutateEvents, whileLocked, type EventDeletionDeps } from './deletion-batch.js';

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
 * Ids one mutation rewrites: their names and persons stay well under 18.16's 256 KiB query and
 * ZooKeeper's 1 MiB node for an ON CLUSTER statement, even for long distinct ids.
 */
export const SQUASH_CHUNK = 1_000;

/** A distinct id whose events carry another person than its identity row's latest version says. */
export interface MovedDistinctId {
  team_id: number;
  distinct_id: string;
  person_id: string;
  version: number;
}

/**
 * The moved distinct ids (above version 0, not deleted) whose latest version is newer than the
 * one their events were last rewritten to, and was stored in ClickHouse before `settledBefore`.
 */
export async function movedDistinctIds(clickhouse: ClickHouse, settledBefore: Date): Promise<MovedDistinctId[]> {
  const rows = await clickhouse.query<{ team_id: string | number; distinct_id: string; current_person: string; latest: string | number }>(
    sql`SELECT team_id, distinct_id, current_person, latest FROM (
          SELECT team_id, distinct_id, toString(argMax(person_id, version)) AS current_person, max(version) AS latest, max(_timestamp) AS stored
          FROM person_distinct_id GROUP BY team_id, distinct_id
          HAVING latest > 0 AND argMax(is_deleted, version) = 0 AND stored < ${settledBefore}) AS moved
        ANY LEFT JOIN (SELECT team_id, distinct_id, max(version) AS squashed FROM squashed_distinct_ids GROUP BY team_id, distinct_id) AS done
        USING (team_id, distinct_id)
        WHERE latest > squashed
        ORDER BY team_id, distinct_id`,
  );
  return rows.map((r) => ({ team_id: Number(r.team_id), distinct_id: r.distinct_id, person_id: r.current_person, version: Number(r.latest) }));
}

export interface SquashResult {
  /** Distinct ids whose events now carry their current person. */
  distinctIds: number;
  /** Mutations it ran (a project's ids, SQUASH_CHUNK at a time). */
  mutations: number;
  skipped: boolean;
}

/**
 * PostHog's override squash: rewrites the events of each moved distinct id to the person its
 * identity row now names, one `ALTER TABLE ... UPDATE` per chunk of a project's ids, waits for it,
 * and only then records the ids as squashed at that version. Persons-on-events queries then join
 * only the moves made since. A crash before the record leaves the ids to the next run, which
 * rewrites them to the same person again.
 */
export async function runOverrideSquash(deps: EventDeletionDeps & { settleMs?: number }): Promise<SquashResult> {
  const result = await whileLocked(deps.pool, SQUASH_LOCK_ID, async () => {
    const now = (deps.clock ?? (() => new Date()))();
    const moved = await movedDistinctIds(deps.clickhouse, new Date(now.getTime() - (deps.settleMs ?? SQUASH_SETTLE_MS)));
    let mutations = 0;
    for (let start = 0; start < moved.length; ) {
      const team = moved[start]!.team_id;
      let end = start;
      while (end < moved.length && end - start < SQUASH_CHUNK && moved[end]!.team_id === team) end++;
      const chunk = moved.slice(start, end);
      const ids = chunk.map((m) => m.distinct_id);
      const persons = chunk.map((m) => m.person_id);
      // 18.16's transform takes strings, not UUIDs: the person goes through its text.
      await mutateEvents(
        deps,
        sql`UPDATE person_id = toUUID(transform(distinct_id, ${ids}, ${persons}, toString(person_id))) WHERE team_id = ${team} AND ${inList(sql`distinct_id`, ids)}`,
        30 * 60_000,
      );
      await deps.clickhouse.insert('squashed_distinct_ids', ['team_id', 'distinct_id', 'version'], chunk.map((m) => ({ team_id: m.team_id, distinct_id: m.distinct_id, version: m.version })));
      mutations++;
      start = end;
    }
    deps.logger.info({ distinctIds: moved.length, mutations }, 'override squash finished');
    return { distinctIds: moved.length, mutations, skipped: false };
  });
  if (result === null) deps.logger.info('another worker is running the override squash');
  return result ?? { distinctIds: 0, mutations: 0, skipped: true };
}
