import { randomInt, randomUUID } from 'node:crypto';
import { sql, type ClickHouse, type Topology } from '@tributary/clickhouse';
import { EVENT_ROW_COLUMNS, eventRow } from '@tributary/test-support';
import { deleteEventsWhere, deletionCondition, type DeletionRequest } from '../src/index.js';

/**
 * The deletion batch's ClickHouse statements (the mutation and the wait for it) on real rows:
 * `deletion-statements.integration.test.ts` runs them on the stack's ClickHouse 18.16,
 * `deletion-statements-chdb.test.ts` on ClickHouse 26, with the same expectations.
 */
export function deletionSuite(target: () => { clickhouse: ClickHouse; topology: Topology }): void {
  it("deletes a person's events by distinct id and by person id, in its project only", async () => {
    const { clickhouse, topology } = target();
    const team = 600_000_000 + randomInt(90_000_000);
    const other = team + 1;
    const [deleted, byPersonId, kept] = [randomUUID(), randomUUID(), randomUUID()];
    const rows = [
      ...['gone-0', 'gone-1'].map((id) => eventRow(team, id, 'seen', '2024-03-01 09:00:00', {}, { person_id: deleted })),
      // A distinct id the request does not name, of the person it names by id.
      eventRow(team, 'renamed', 'seen', '2024-03-01 09:00:00', {}, { person_id: byPersonId }),
      eventRow(team, 'kept', 'seen', '2024-03-01 09:00:00', {}, { person_id: kept }),
      // Another project's events under the same distinct ids and person id stay.
      ...['gone-0', 'renamed'].map((id) => eventRow(other, id, 'seen', '2024-03-01 09:00:00', {}, { person_id: byPersonId })),
    ];
    await clickhouse.insert('events', EVENT_ROW_COLUMNS, rows);
    const request = (personUuid: string, distinctIds: string[], id: number): DeletionRequest => ({ id, team_id: team, person_uuid: personUuid, distinct_ids: distinctIds, created_at: new Date(), done_at: null });

    const requests = [request(deleted, ['gone-0', 'gone-1'], 1), request(byPersonId, [], 2)];
    await deleteEventsWhere({ clickhouse, topology, pollMs: 50 }, deletionCondition(requests), 60_000);

    const left = await clickhouse.query<{ team: string; distinct_id: string }>(sql`SELECT toString(team_id) AS team, distinct_id FROM events WHERE team_id IN (${team}, ${other}) ORDER BY team, distinct_id`);
    expect(left.map((r) => [Number(r.team), r.distinct_id])).toEqual([[team, 'kept'], [other, 'gone-0'], [other, 'renamed']]);
  });
}
