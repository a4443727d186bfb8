import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS, formatDateTime, type ClickHouse, type DistinctIdRowOut, type PersonRowOut } from '@tributary/clickhouse';
import type { PersonCache } from '@tributary/control-plane';
import type { DistinctIdChange, PersonRecord } from './person-store.js';

const personRow = (person: PersonRecord, deleted: boolean): PersonRowOut => ({
  id: person.uuid,
  created_at: formatDateTime(person.created_at),
  team_id: person.team_id,
  properties: deleted ? '{}' : JSON.stringify(person.properties),
  is_identified: person.is_identified ? 1 : 0,
  is_deleted: deleted ? 1 : 0,
  version: person.version,
});

const distinctIdRow = (teamId: number, change: DistinctIdChange, deleted: boolean): DistinctIdRowOut => ({
  team_id: teamId,
  distinct_id: change.distinct_id,
  person_id: change.person_uuid,
  is_deleted: deleted ? 1 : 0,
  version: change.version,
});

/**
 * Keeps what other readers hold of a person in step with Postgres after the API changed it:
 * the versioned ClickHouse copies (cohort and event queries) and decide's person cache.
 */
export class PersonCopies {
  constructor(
    private readonly clickhouse: ClickHouse,
    private readonly cache: PersonCache,
  ) {}

  async deleted(teamId: number, persons: readonly PersonRecord[], distinctIds: readonly DistinctIdChange[]): Promise<void> {
    await Promise.all([
      this.clickhouse.insert('person', PERSON_COLUMNS, persons.map((p) => personRow(p, true))),
      this.clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, distinctIds.map((d) => distinctIdRow(teamId, d, true))),
      this.cache.forget(teamId, distinctIds.map((d) => d.distinct_id)),
    ]);
  }

  async split(teamId: number, created: readonly PersonRecord[], moved: readonly DistinctIdChange[]): Promise<void> {
    await Promise.all([
      this.clickhouse.insert('person', PERSON_COLUMNS, created.map((p) => personRow(p, false))),
      this.clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, moved.map((d) => distinctIdRow(teamId, d, false))),
      ...created.map((p) => this.cache.set(teamId, p.distinct_ids, { personId: p.id, personUuid: p.uuid, properties: p.properties })),
    ]);
  }
}
