import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS, distinctIdRow, personRow, type ClickHouse } from '@tributary/clickhouse';
import type { PersonCache } from '@tributary/control-plane';
import type { DistinctIdChange, PersonRecord } from './management-person-store.js';

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
      this.clickhouse.insert('person', PERSON_COLUMNS, persons.map((p) => personRow(p, { deleted: true }))),
      this.clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, distinctIds.map((d) => distinctIdRow(teamId, d, { deleted: true }))),
      this.cache.forget(teamId, distinctIds.map((d) => d.distinctId)),
    ]);
  }

  async split(teamId: number, created: readonly PersonRecord[], moved: readonly DistinctIdChange[]): Promise<void> {
    await Promise.all([
      this.clickhouse.insert('person', PERSON_COLUMNS, created.map((p) => personRow(p, { deleted: false }))),
      this.clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, moved.map((d) => distinctIdRow(teamId, d, { deleted: false }))),
      ...created.map((p) => this.cache.set(teamId, p.distinct_ids, { personId: p.id, personUuid: p.uuid, properties: p.properties })),
    ]);
  }
}
